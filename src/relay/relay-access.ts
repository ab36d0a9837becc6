import type { IncomingMessage, ServerResponse } from 'node:http';
import { tokenOwner, type TokenBackend, type TokenOwner } from './relay-tokens';

/**
 * The listeners' side of the relay: who a request is (its bearer token), and the JSON answers of
 * the listener routes. A refused token is one 401 with a message that says what to do, never which
 * part was wrong, and never the token.
 */

export function sendJson(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)), 'Cache-Control': 'no-store' });
  res.end(text);
}

export function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { ok: false, code, message });
}

/** Who the request's token belongs to, or undefined after answering 401 (or 503 when the tokens cannot be read). */
export async function authenticate(req: IncomingMessage, res: ServerResponse, tokens: TokenBackend): Promise<TokenOwner | undefined> {
  const header = req.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(header) : null;
  if (match === null) {
    refuse(res, 401, 'token_missing', 'send the access token as Authorization: Bearer <token> (svc-webhooks relay token create <name> makes one)');
    return undefined;
  }
  let owner: TokenOwner | undefined;
  try {
    owner = tokenOwner(await tokens.read(), match[1]!);
  } catch {
    refuse(res, 503, 'tokens_unavailable', 'the relay cannot read its access tokens; retry later');
    return undefined;
  }
  if (owner === undefined)
    refuse(res, 401, 'token_invalid', 'this access token is not valid here: wrong, or revoked (ask for a new one: svc-webhooks relay token create <name>)');
  return owner;
}

/** A small JSON body (a listener's report), at most `limit` bytes; undefined when it is not one. */
export function readSmallJson(req: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        resolve(undefined);
        req.destroy();
      } else chunks.push(chunk);
    });
    req.once('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(undefined);
      }
    });
    req.once('error', () => resolve(undefined));
  });
}
