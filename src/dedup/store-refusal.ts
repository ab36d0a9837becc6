import type { SvcWebhookError } from '../errors';

// Refusals a store's transaction (ctx.transaction) raised inside a handler that tell the sender more
// than "failed": retry later, the database or another attempt is in the way. Kept by identity in a
// WeakSet: looking a value up never touches it, so a hostile value a handler throws stays untouched.
const storeRefusals = new WeakSet<SvcWebhookError>();

/** Marks an error raised by the store inside a handler's transaction, to be answered as it is. */
export function storeRefusal(error: SvcWebhookError): SvcWebhookError {
  storeRefusals.add(error);
  return error;
}

/** True for an error the store marked with storeRefusal(), whatever else a handler may throw. */
export function isStoreRefusal(value: unknown): value is SvcWebhookError {
  // WeakSet#has answers false for a primitive or null; no type test needed before it.
  return storeRefusals.has(value as SvcWebhookError);
}
