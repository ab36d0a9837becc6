import { LIMIT, verifyAndParse } from './floor';
import { trivialHandler } from './handler';

const JSON_TYPE = { 'Content-Type': 'application/json; charset=utf-8' };

/**
 * The Fetch floor: a hand-written `(request: Request) => Promise<Response>` doing the floor's work
 * (read the body, check the timestamp and the HMAC, JSON.parse, answer). It runs on the same server
 * as the svc-webhooks Fetch handler it is compared with (@hono/node-server on node, Bun.serve on
 * Bun), so that the two differ only in the handler.
 */
export async function receiveFetch(request: Request): Promise<Response> {
  if (request.method !== 'POST' || new URL(request.url).pathname !== '/webhooks/board') return new Response('{}', { status: 404, headers: JSON_TYPE });
  const body = Buffer.from(await request.arrayBuffer());
  if (body.length > LIMIT) return new Response('{}', { status: 413, headers: JSON_TYPE });
  const headers = {
    'x-svc-signature': request.headers.get('x-svc-signature') ?? undefined,
    'x-svc-timestamp': request.headers.get('x-svc-timestamp') ?? undefined,
  };
  if (verifyAndParse(headers, body) === undefined) return new Response('{}', { status: 401, headers: JSON_TYPE });
  trivialHandler();
  return new Response('{"ok":true}', { status: 200, headers: JSON_TYPE });
}

export function createFetch(): (request: Request) => Promise<Response> {
  return receiveFetch;
}
