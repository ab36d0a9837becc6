import { SvcWebhookError } from '../errors';

/**
 * The bounds every body reader keeps, whatever the request type: the size limit (declared or
 * streamed), the declared length, and the sender's deadline.
 */

/** The sender gives up after 10 s; a body still arriving then is from no real delivery. */
export const BODY_TIMEOUT_MS = 10_000;

/** Content-Length as a number, or undefined when it is absent or not a number. */
export function declaredLength(text: string | null | undefined): number | undefined {
  if (typeof text !== 'string' || Number.isNaN(Number(text))) return undefined;
  return parseInt(text, 10);
}

/** The received chunks as one Buffer, once the stream has ended; its length must be the declared one. */
export function joinBody(chunks: readonly Buffer[], received: number, declared: number | undefined): Buffer {
  if (declared !== undefined && received !== declared) {
    throw readFailed(new Error(`request size did not match content length: received ${received} of ${declared} bytes`));
  }
  // One chunk is returned as it is, saving a copy; a copy would do the same (test/mutation/EQUIVALENT.md).
  // Stryker disable next-line ConditionalExpression
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
}

export function tooLarge(limit: number): SvcWebhookError {
  return new SvcWebhookError('body_too_large', `request body is larger than the limit of ${limit} bytes`);
}

export function readFailed(cause: unknown): SvcWebhookError {
  return new SvcWebhookError('body_read_failed', 'the request body could not be read completely', { cause });
}

export function bodyTimeout(): SvcWebhookError {
  return new SvcWebhookError('body_timeout', `the request body did not arrive within ${BODY_TIMEOUT_MS / 1000} s`);
}

export function ended(): Error {
  return new Error('the request closed before its body ended');
}

/** The body was read before svc-webhooks saw the request; `fix` says how to mount it instead. */
export function alreadyConsumed(fix: string): SvcWebhookError {
  return new SvcWebhookError('body_already_consumed', `svc-webhooks: the request body was already consumed ${fix}`);
}
