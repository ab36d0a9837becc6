/** One minute, the first retry's delay. */
const MINUTE_MS = 60_000;
/** The longest wait between two attempts. */
const MAX_RETRY_DELAY_MS = 60 * MINUTE_MS;
/** How long a delivery lives, and how long a webhook may fail before it is disabled. */
export const DAY_MS = 24 * 60 * MINUTE_MS;

/** The wait after failed attempt number `attempt` (1-based): 1, 2, 4 … minutes, at most 1 hour. */
export function retryDelayMs(attempt: number): number {
  return Math.min(MINUTE_MS * 2 ** Math.min(attempt - 1, 30), MAX_RETRY_DELAY_MS);
}
