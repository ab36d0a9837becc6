import type { IncomingMessage } from 'node:http';
import { SvcWebhookError } from '../errors';

type MaybeParsed = IncomingMessage & { body?: unknown; _body?: boolean };

const MOUNT_HINT =
  'the request body was already consumed by another body parser (such as express.json()): ' +
  'mount the svc-webhooks middleware before it, or give this route express.raw({ type: "application/json" })';

/** Refuses a body the sender never sends: anything but JSON, or any content coding. */
export function checkContentHeaders(req: IncomingMessage): void {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw new SvcWebhookError('content_encoding_unsupported', 'Content-Encoding is not supported; send the JSON body as it is');
  }
  const type = req.headers['content-type'];
  const mediaType = type === undefined ? '' : type.split(';', 1)[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new SvcWebhookError('unsupported_media_type', 'Content-Type must be application/json');
  }
}

/** The sender gives up after 10 s; a body still arriving then is from no real delivery. */
export const BODY_TIMEOUT_MS = 10_000;

/**
 * The exact bytes of the body, bounded by `limit`: signatures are over these bytes, so they are
 * never re-serialised. A Buffer left by express.raw() is used as it is.
 */
export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const parsed = (req as MaybeParsed).body;
  if (Buffer.isBuffer(parsed)) {
    return parsed.length > limit ? Promise.reject(tooLarge(limit)) : Promise.resolve(parsed);
  }
  if ((req as MaybeParsed)._body === true || (parsed !== undefined && !isEmptyPlaceholder(parsed)) || req.readableEnded || req.readable === false) {
    return Promise.reject(new SvcWebhookError('body_already_consumed', `svc-webhooks: ${MOUNT_HINT}`));
  }
  const declared = declaredLength(req);
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
    const timer = setTimeout(() => fail(new SvcWebhookError('body_timeout', `the request body did not arrive within ${BODY_TIMEOUT_MS / 1000} s`)), BODY_TIMEOUT_MS);
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      received += chunk.length;
      if (received > limit) fail(tooLarge(limit));
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      if (declared !== undefined && received !== declared) {
        fail(readFailed(new Error(`request size did not match content length: received ${received} of ${declared} bytes`)));
        return;
      }
      settled = true;
      clearTimeout(timer);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    });
    req.on('error', (err: Error) => fail(readFailed(err)));
    // A request destroyed before its end (the client went away) emits close without end. Every
    // request emits close, so the error (and its stack trace) is only made when it is needed.
    req.on('close', () => {
      if (!settled) fail(readFailed(new Error('the request closed before its body ended')));
    });
  });
}

function declaredLength(req: IncomingMessage): number | undefined {
  const text = req.headers['content-length'];
  if (text === undefined || Number.isNaN(Number(text))) return undefined;
  return parseInt(text, 10);
}

// Express 4 sets req.body to {} before any parser ran; that does not mean the stream was read.
function isEmptyPlaceholder(body: unknown): boolean {
  return typeof body === 'object' && body !== null && Object.keys(body).length === 0 && (body as object).constructor === Object;
}

function tooLarge(limit: number): SvcWebhookError {
  return new SvcWebhookError('body_too_large', `request body is larger than the limit of ${limit} bytes`);
}

function readFailed(cause: unknown): SvcWebhookError {
  return new SvcWebhookError('body_read_failed', 'the request body could not be read completely', { cause });
}
