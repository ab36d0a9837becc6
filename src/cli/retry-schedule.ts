/**
 * svc's delivery schedule: a retry after 1 minute, then 2, 4 and so on, at most 1 hour apart,
 * while the delivery is younger than a day. (The spec states the steps after 4 minutes only as
 * "and so on, up to 1 hour"; doubling is the reading taken here.)
 */
export const FIRST_RETRY_MS = 60_000;
export const MAX_RETRY_INTERVAL_MS = 60 * 60_000;
export const DELIVERY_LIFETIME_MS = 24 * 60 * 60_000;

/** The waits before each retry, in svc time; every retry happens within the lifetime. */
export function retryDelays(): number[] {
  const delays: number[] = [];
  let elapsed = 0;
  for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_INTERVAL_MS)) {
    if (elapsed + delay > DELIVERY_LIFETIME_MS) return delays;
    delays.push(delay);
    elapsed += delay;
  }
}
