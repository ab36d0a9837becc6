/**
 * The floor: what any correct receiver of a board delivery must do, written by hand with nothing
 * else — read the body, check the timestamp and the HMAC in constant time, JSON.parse. The stacks
 * under test are compared with it; both floor stacks (node:http, Express) share this code.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { SVC_SECRET } from '../signing';

export const LIMIT = 512 * 1024;
const TOLERANCE_S = 300;
const OK = '{"ok":true}';

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    req.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > LIMIT) reject(new Error('too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length)));
    req.on('error', reject);
  });
}

/** The parsed body when the delivery is authentic, undefined when it is not. */
export function verifyAndParse(headers: IncomingHttpHeaders, body: Buffer): unknown {
  const signature = headers['x-svc-signature'];
  const timestamp = headers['x-svc-timestamp'];
  if (typeof signature !== 'string' || typeof timestamp !== 'string' || !signature.startsWith('v1=')) return undefined;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_S) return undefined;
  const claimed = Buffer.from(signature.slice(3), 'hex');
  const mac = createHmac('sha256', SVC_SECRET).update(timestamp).update('.').update(body).digest();
  if (claimed.length !== mac.length || !timingSafeEqual(claimed, mac)) return undefined;
  return JSON.parse(body.toString('utf8'));
}

export function reply(res: ServerResponse, status: number, body = OK): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** The floor's whole work for one request: read, verify, parse, call the handler, answer. */
export function receiveByHand(req: IncomingMessage, res: ServerResponse, handler: () => void): void {
  readBody(req).then(
    (body) => {
      if (verifyAndParse(req.headers, body) === undefined) return reply(res, 401, '{}');
      handler();
      reply(res, 200);
    },
    () => reply(res, 400, '{}'),
  );
}
