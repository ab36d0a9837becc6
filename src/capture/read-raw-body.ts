import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { BODY_TIMEOUT_MS, alreadyConsumed, bodyTimeout, declaredLength, ended, readFailed, tooLarge } from './body-bounds';
import { SvcWebhookError } from '../errors';

export { BODY_TIMEOUT_MS, checkContentHeaders } from './body-bounds';

type MaybeParsed = IncomingMessage & { body?: unknown; _body?: boolean };

/** How to fix it; express.raw() gets the webhook's own limit (its default, 100kb, refuses bodies svc may send). */
function mountHint(limit: number): string {
  return (
    'by another body parser (such as express.json()): ' +
    `mount the svc-webhooks middleware before it, or give this route express.raw({ type: "application/json", limit: ${limit} })`
  );
}

/**
 * The exact bytes of a Node request's body, bounded by `limit`: signatures are over these bytes,
 * so they are never re-serialised. raw-body reads the stream (the limit, the declared length, the
 * abort); around it stay what it does not do: a body another parser already read, and the sender's
 * deadline for the whole body.
 */
export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const parsed = (req as MaybeParsed).body;
  if (Buffer.isBuffer(parsed)) {
    // A Buffer left by express.raw() is the body as it was sent.
    return parsed.length > limit ? Promise.reject(tooLarge(limit)) : Promise.resolve(parsed);
  }
  if ((req as MaybeParsed)._body === true || (parsed !== undefined && !isEmptyPlaceholder(parsed)) || req.readableEnded || req.readable === false) {
    return Promise.reject(alreadyConsumed(mountHint(limit)));
  }
  const declared = declaredLength(req.headers['content-length']);
  // A declared length over the limit is refused before a byte is read, and the stream left paused;
  // the receiver then closes the connection rather than read the rest.
  const reading = getRawBody(req, declared === undefined ? { limit } : { limit, length: declared });
  return new Promise((resolve, reject) => {
    // A body still arriving when the sender has given up is from no real delivery.
    const timer = setTimeout(() => {
      req.pause();
      reject(bodyTimeout());
    }, BODY_TIMEOUT_MS);
    reading.then(
      (body) => {
        clearTimeout(timer);
        resolve(body);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(readError(err, limit));
      },
    );
  });
}

/** raw-body's errors (each has a `type`) as the library's. */
function readError(err: unknown, limit: number): SvcWebhookError {
  switch (typeof err === 'object' && err !== null ? (err as { type?: unknown }).type : undefined) {
    case 'entity.too.large':
      return tooLarge(limit);
    case 'stream.encoding.set':
      return new SvcWebhookError('body_read_failed', 'the request stream was set to decode text; svc-webhooks needs the raw bytes');
    case 'request.aborted':
      return readFailed(ended());
    default:
      // 'request.size.invalid' (fewer or more bytes than Content-Length) and stream errors.
      return readFailed(err);
  }
}

// Express 4 sets req.body to {} before any parser ran; that does not mean the stream was read.
function isEmptyPlaceholder(body: unknown): boolean {
  return typeof body === 'object' && body !== null && Object.keys(body).length === 0 && (body as object).constructor === Object;
}
