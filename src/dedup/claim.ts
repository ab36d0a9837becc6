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
