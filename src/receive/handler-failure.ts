import { isStoreRefusal } from '../dedup/store-refusal';
import { SvcWebhookError } from '../errors';

/** The answer to a delivery whose handlers failed: 500 handler_failed, or the transaction's own 503/409. */
export function handlerFailure(error: unknown): SvcWebhookError {
  if (isStoreRefusal(error)) return error;
  return new SvcWebhookError('handler_failed', 'a handler failed', { cause: error });
}
