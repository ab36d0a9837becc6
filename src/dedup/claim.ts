import type { Logger } from 'pino';
import { SvcWebhookError } from '../errors';
import { isThenable } from '../internal/thenable';
import type { ClaimResult, DeliveryStore } from './delivery-store';

// A store may answer synchronously (the memory store does): then no promise is made on the hot path.

function unavailable(err: unknown): SvcWebhookError {
  return new SvcWebhookError('store_unavailable', 'the de-duplication store is unavailable; retry later', { cause: err, retryAfter: 5 });
}

/** Claims a delivery; a store that fails makes the delivery fail closed (503, retried later). */
export function claimDelivery(store: DeliveryStore, id: string, leaseMs: number): ClaimResult | Promise<ClaimResult> {
  let answer: ClaimResult | Promise<ClaimResult>;
  try {
    answer = store.claim(id, leaseMs);
  } catch (err) {
    throw unavailable(err);
  }
  return isThenable<ClaimResult>(answer)
    ? Promise.resolve(answer).catch((err: unknown) => {
        throw unavailable(err);
      })
    : answer;
}

/**
 * Commits a succeeded delivery or releases a failed one. A commit that fails is logged and not
 * answered with an error: the handlers did run, and a retry would run them twice. The claim's lease
 * then keeps retries away until it lapses.
 */
export function settleClaim(
  store: DeliveryStore,
  id: string,
  token: string,
  run: { readonly state: 'succeeded' | 'failed' },
  logger: Logger,
): void | Promise<void> {
  const report = (err: unknown) =>
    logger.error({ err, deliveryId: id }, run.state === 'succeeded' ? 'could not record a handled delivery in the de-dup store' : 'could not release a failed delivery in the de-dup store');
  try {
    const done = run.state === 'succeeded' ? store.commit(id, token) : store.release(id, token);
    if (isThenable(done)) return Promise.resolve(done).then(undefined, report);
  } catch (err) {
    report(err);
  }
}

/**
 * Keeps a claim alive while handlers that outlived their deadline still run: renews the lease at
 * once and then at a third of its length, and returns the function that stops it. (The deadline is
 * shorter than the lease, so a run that settles in time needs no renewal.) A renewal that fails is
 * logged; the lease then lapses as after a crash.
 */
export function holdClaim(store: DeliveryStore, id: string, token: string, leaseMs: number, logger: Logger): () => void {
  const extend = store.extend;
  if (extend === undefined) return () => undefined;
  const renew = () =>
    Promise.resolve()
      .then(() => extend.call(store, id, token, leaseMs))
      .catch((err: unknown) => logger.warn({ err, deliveryId: id }, 'could not renew the claim of a running delivery'));
  void renew();
  const timer = setInterval(renew, Math.max(1, Math.floor(leaseMs / 3)));
  timer.unref();
  return () => clearInterval(timer);
}
