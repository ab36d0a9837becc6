import type { IncomingMessage, ServerResponse } from 'node:http';

/** The largest request body the emulator reads; a setup call is far smaller. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * A refused request: its status and a JSON body `{ code, message }` naming what was refused. Where
 * the spec shows no status (a bad url or secret, a malformed body), the emulator answers 400.
 */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Answers `status` with `body` as JSON (no body for undefined). */
export function sendJson(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** Answers a refusal; anything else is a 500 whose message names no input. */
export function sendRefusal(res: ServerResponse, err: unknown): void {
  if (err instanceof ApiRefusal) sendJson(res, err.status, { code: err.code, message: err.message }, err.headers);
  else sendJson(res, 500, { code: 'internal', message: 'the emulator failed on this request' });
}

/** Reads the request body as UTF-8, refusing more than 64 KB with a 413. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new ApiRefusal(413, 'body_too_large', 'the body is over 64 KB'));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The body as a JSON object; an empty body is `{}`; anything else is refused with a 400 `invalid_body`. */
export function jsonObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // refused below
  }
  throw new ApiRefusal(400, 'invalid_body', 'the body must be a JSON object');
}
