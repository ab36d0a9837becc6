import type { Logger } from 'pino';
import { SvcWebhookError } from '../errors';
import type { ClaimResult, DeliveryStore } from './delivery-store';

/** Claims a delivery; a store that fails makes the delivery fail closed (503, retried later). */
export async function claimDelivery(store: DeliveryStore, id: string, leaseMs: number): Promise<ClaimResult> {
  try {
    return await store.claim(id, leaseMs);
  } catch (err) {
    throw new SvcWebhookError('store_unavailable', 'the de-duplication store is unavailable; retry later', { cause: err, retryAfter: 5 });
  }
}

/**
 * Commits a succeeded delivery or releases a failed one. A commit that fails is logged and not
 * answered with an error: the handlers did run, and a retry would run them twice. The claim's lease
 * then keeps retries away until it lapses.
 */
export async function settleClaim(
  store: DeliveryStore,
  id: string,
  token: string,
  run: { readonly state: 'succeeded' | 'failed' },
  logger: Logger,
): Promise<void> {
  try {
    if (run.state === 'succeeded') await store.commit(id, token);
    else await store.release(id, token);
  } catch (err) {
    logger.error({ err, deliveryId: id }, run.state === 'succeeded' ? 'could not record a handled delivery in the de-dup store' : 'could not release a failed delivery in the de-dup store');
  }
}

/**
 * Keeps a claim alive while its handlers run, renewing the lease at a third of its length; returns
 * the function that stops it. A renewal that fails is logged: the lease then lapses as after a crash.
 */
export function holdClaim(store: DeliveryStore, id: string, token: string, leaseMs: number, logger: Logger): () => void {
  const extend = store.extend;
  if (extend === undefined) return () => undefined;
  const timer = setInterval(() => {
    Promise.resolve()
      .then(() => extend.call(store, id, token, leaseMs))
      .catch((err: unknown) => logger.warn({ err, deliveryId: id }, 'could not renew the claim of a running delivery'));
  }, Math.max(1, Math.floor(leaseMs / 3)));
  timer.unref();
  return () => clearInterval(timer);
}
