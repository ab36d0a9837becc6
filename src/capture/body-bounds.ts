import { SvcWebhookError } from '../errors';
import { headerText, type HeaderSource } from '../internal/request/headers';
import { nodeBuiltin } from '../internal/runtime/node-builtins';

/**
 * What every body must be, whatever the request type: JSON sent as it is (checked before a byte is
 * read), and the bounds every body reader keeps: the size limit (declared or streamed), the
 * declared length, and the sender's deadline.
 */

/** Refuses a body the sender never sends: anything but JSON, or any content coding. */
export function checkContentHeaders(headers: HeaderSource): void {
  const encoding = headerText(headers, 'content-encoding');
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw new SvcWebhookError('content_encoding_unsupported', 'Content-Encoding is not supported; send the JSON body as it is');
  }
  const type = headerText(headers, 'content-type');
  // Stryker disable next-line StringLiteral: any text but application/json is refused alike (test/mutation/EQUIVALENT.core.md)
  const mediaType = type === undefined ? '' : type.split(';', 1)[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new SvcWebhookError('unsupported_media_type', 'Content-Type must be application/json');
  }
}

/** The sender gives up after 10 s; a body still arriving then is from no real delivery. */
export const BODY_TIMEOUT_MS = 10_000;

/** Content-Length as a number, or undefined when it is absent or not a number. */
export function declaredLength(text: string | null | undefined): number | undefined {
  if (typeof text !== 'string' || Number.isNaN(Number(text))) return undefined;
  return parseInt(text, 10);
}

/** The received chunks as one byte array, once the stream has ended; its length must be the declared one. */
export function joinBody(chunks: readonly Uint8Array[], received: number, declared: number | undefined): Uint8Array {
  if (declared !== undefined && received !== declared) {
    throw readFailed(new Error(`request size did not match content length: received ${received} of ${declared} bytes`));
  }
  // One chunk is returned as it is, saving a copy; a copy would do the same (test/mutation/EQUIVALENT.md).
  // Stryker disable next-line ConditionalExpression
  if (chunks.length === 1) return chunks[0]!;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: either joins the same bytes (test/mutation/EQUIVALENT.core.md)
  return NodeBuffer === undefined ? concatBytes(chunks, received) : NodeBuffer.concat(chunks, received);
}

// Node's Buffer where the runtime has it: the body handlers and logs get is a Buffer there, as from
// every other adapter, and Buffer.concat skips the zero-filling of a new Uint8Array.
const NodeBuffer = nodeBuiltin('node:buffer')?.Buffer;

/** A chunk as the body's type: a Buffer view of the same bytes on Node, the chunk itself elsewhere. */
export function bodyBytes(chunk: Uint8Array): Uint8Array {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: the same bytes either way (test/mutation/EQUIVALENT.core.md)
  return NodeBuffer === undefined ? chunk : NodeBuffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** The chunks, `total` bytes in all, as one array, where there is no Buffer. */
export function concatBytes(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
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
