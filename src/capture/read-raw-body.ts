import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { SvcWebhookError, isSvcWebhookError } from '../errors';

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

/**
 * The exact bytes of the body, bounded by `limit`: signatures are over these bytes, so they are
 * never re-serialised. A Buffer left by express.raw() is used as it is.
 */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const parsed = (req as MaybeParsed).body;
  if (Buffer.isBuffer(parsed)) {
    if (parsed.length > limit) throw tooLarge(limit);
    return parsed;
  }
  if ((req as MaybeParsed)._body === true || (parsed !== undefined && !isEmptyPlaceholder(parsed)) || req.readableEnded) {
    throw new SvcWebhookError('body_already_consumed', `svc-webhooks: ${MOUNT_HINT}`);
  }
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      req.pause();
      reject(new SvcWebhookError('body_timeout', `the request body did not arrive within ${BODY_TIMEOUT_MS / 1000} s`));
    }, BODY_TIMEOUT_MS);
  });
  try {
    return await Promise.race([getRawBody(req, { length: req.headers['content-length'], limit }), stalled]);
  } catch (err) {
    throw isSvcWebhookError(err) ? err : bodyError(err, limit);
  } finally {
    clearTimeout(timer);
  }
}

/** The sender gives up after 10 s; a body still arriving then is from no real delivery. */
export const BODY_TIMEOUT_MS = 10_000;

// Express 4 sets req.body to {} before any parser ran; that does not mean the stream was read.
function isEmptyPlaceholder(body: unknown): boolean {
  return typeof body === 'object' && body !== null && Object.keys(body).length === 0 && (body as object).constructor === Object;
}

function tooLarge(limit: number): SvcWebhookError {
  return new SvcWebhookError('body_too_large', `request body is larger than the limit of ${limit} bytes`);
}

function bodyError(err: unknown, limit: number): SvcWebhookError {
  const type = (err as { type?: string }).type;
  if (type === 'entity.too.large') return tooLarge(limit);
  if (type === 'stream.not.readable') return new SvcWebhookError('body_already_consumed', `svc-webhooks: ${MOUNT_HINT}`, { cause: err });
  return new SvcWebhookError('body_read_failed', 'the request body could not be read completely', { cause: err });
}
