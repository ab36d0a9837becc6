import { SvcWebhookError, isSvcWebhookError } from '../errors';

// The answers a store's transaction (ctx.transaction) gives that tell the sender more than "failed":
// retry later, the database or another attempt is in the way.
const PASSED_THROUGH = new Set(['store_unavailable', 'delivery_in_progress']);

/** The answer to a delivery whose handlers failed: 500 handler_failed, or the transaction's own 503/409. */
export function handlerFailure(error: unknown): SvcWebhookError {
  if (isSvcWebhookError(error) && PASSED_THROUGH.has(error.code)) return error;
  return new SvcWebhookError('handler_failed', 'a handler failed', { cause: error });
}
