import type { SvcWebhookError } from '../errors';
import { BODY_TIMEOUT_MS, alreadyConsumed, bodyBytes, bodyTimeout, declaredLength, joinBody, readFailed, tooLarge } from './body-bounds';

const USED_HINT =
  '(request.bodyUsed is true): hand createWebHandler the request before anything reads it ' +
  '(no request.json(), request.text() or framework body parser first), or pass request.clone() to whatever else needs the body';

/**
 * The exact bytes of a Fetch `Request`'s body, bounded by `limit`. A declared oversize is refused
 * from Content-Length alone; a streamed one as soon as it passes the limit, so neither is buffered
 * whole. Whatever is not read is cancelled, so the runtime can drop the rest.
 */
export async function readWebBody(request: Request, limit: number): Promise<Uint8Array> {
  // A locked stream has a reader elsewhere: what it reads is lost to the signature check.
  if (request.bodyUsed || request.body?.locked === true) throw alreadyConsumed(USED_HINT);
  const declared = declaredLength(request.headers.get('content-length'));
  if (declared !== undefined && declared > limit) throw tooLarge(limit);
  const stream = request.body;
  if (stream === null) return joinBody([], 0, declared);
  const reader = stream.getReader();
  let failure: SvcWebhookError | undefined;
  const stop = (error: SvcWebhookError) => {
    failure ??= error;
    // A pending read resolves as done once the stream is cancelled.
    reader.cancel(error).catch(() => undefined);
  };
  const timer = setTimeout(() => stop(bodyTimeout()), BODY_TIMEOUT_MS);
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        throw failure ?? readFailed(err);
      }
      if (failure !== undefined) throw failure;
      if (next.done) break;
      const chunk = next.value;
      received += chunk.byteLength;
      if (received > limit) {
        stop(tooLarge(limit));
        throw failure!;
      }
      chunks.push(bodyBytes(chunk));
    }
  } finally {
    clearTimeout(timer);
  }
  return joinBody(chunks, received, declared);
}
