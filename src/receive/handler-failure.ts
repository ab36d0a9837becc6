import { SvcWebhookError } from '../errors';

// Refusals a store's transaction (ctx.transaction) raised inside a handler that tell the sender more
// than "failed": retry later, the database or another attempt is in the way. Kept by identity in a
// WeakSet: looking a value up never touches it, so a hostile value a handler throws stays untouched.
const storeRefusals = new WeakSet<SvcWebhookError>();

/** Marks an error raised by the store inside a handler's transaction, to be answered as it is. */
export function storeRefusal(error: SvcWebhookError): SvcWebhookError {
  storeRefusals.add(error);
  return error;
}

/** The answer to a delivery whose handlers failed: 500 handler_failed, or the transaction's own 503/409. */
export function handlerFailure(error: unknown): SvcWebhookError {
  // WeakSet#has answers false for a primitive or null; no type test needed before it.
  if (storeRefusals.has(error as SvcWebhookError)) return error as SvcWebhookError;
  return new SvcWebhookError('handler_failed', 'a handler failed', { cause: error });
}
