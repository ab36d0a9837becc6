import type { IncomingMessage } from 'node:http';
import { BODY_TIMEOUT_MS, alreadyConsumed, bodyTimeout, declaredLength, ended, joinBody, readFailed, tooLarge } from './body-bounds';
import { SvcWebhookError } from '../errors';

export { BODY_TIMEOUT_MS } from './body-bounds';
export { checkContentHeaders } from './check-content-headers';

type MaybeParsed = IncomingMessage & { body?: unknown; _body?: boolean };

const MOUNT_HINT =
  'by another body parser (such as express.json()): ' +
  'mount the svc-webhooks middleware before it, or give this route express.raw({ type: "application/json" })';

/**
 * The exact bytes of a Node request's body, bounded by `limit`: signatures are over these bytes,
 * so they are never re-serialised. A Buffer left by express.raw() is used as it is.
 */
export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const parsed = (req as MaybeParsed).body;
  if (Buffer.isBuffer(parsed)) {
    return parsed.length > limit ? Promise.reject(tooLarge(limit)) : Promise.resolve(parsed);
  }
  if ((req as MaybeParsed)._body === true || (parsed !== undefined && !isEmptyPlaceholder(parsed)) || req.readableEnded || req.readable === false) {
    return Promise.reject(alreadyConsumed(MOUNT_HINT));
  }
  const declared = declaredLength(req.headers['content-length']);
  if (declared !== undefined && declared > limit) {
    // Refused from the header alone: the body is left unread and the connection is closed.
    req.pause();
    return Promise.reject(tooLarge(limit));
  }
  if (req.readableEncoding) {
    return Promise.reject(new SvcWebhookError('body_read_failed', 'the request stream was set to decode text; svc-webhooks needs the raw bytes'));
  }
  return readStream(req, limit, declared);
}

/**
 * Reads the stream with as few operations on `req` as it takes: four listeners, never removed (the
 * request is dropped with them). Inside Express every operation on `req` costs several times more,
 * because Express swaps the request's prototype, so this is cheaper than a general-purpose reader.
 */
function readStream(req: IncomingMessage, limit: number, declared: number | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const fail = (error: SvcWebhookError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.pause();
      reject(error);
    };
    const timer = setTimeout(() => fail(bodyTimeout()), BODY_TIMEOUT_MS);
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      received += chunk.length;
      if (received > limit) fail(tooLarge(limit));
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      let body: Buffer;
      try {
        body = joinBody(chunks, received, declared);
      } catch (err) {
        fail(err as SvcWebhookError);
        return;
      }
      settled = true;
      clearTimeout(timer);
      resolve(body);
    });
    req.on('error', (err: Error) => fail(readFailed(err)));
    // A request destroyed before its end (the client went away) emits close without end. Every
    // request emits close, so the error (and its stack trace) is only made when it is needed.
    req.on('close', () => {
      if (!settled) fail(readFailed(ended()));
    });
  });
}

// Express 4 sets req.body to {} before any parser ran; that does not mean the stream was read.
function isEmptyPlaceholder(body: unknown): boolean {
  return typeof body === 'object' && body !== null && Object.keys(body).length === 0 && (body as object).constructor === Object;
}
