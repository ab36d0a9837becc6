import type { Middleware } from '../node/express-middleware';
import { receiveRequest } from '../plain/plain-request';
import { receiverOf } from '../webhook-receiver';

/** A Fetch API request handler: Next.js route handlers, Hono, Bun.serve, Deno.serve, Workers. */
export type WebHandler = (request: Request) => Promise<Response>;

/**
 * A webhook as a `(request: Request) => Promise<Response>` handler, with the same pipeline, answers
 * and options as its Express mount. It answers every POST it is given: the framework's router (or
 * the file's place, in Next.js) decides the path. The body is read as a stream within `limit`.
 */
export function createWebHandler(webhook: Middleware): WebHandler {
  const receiver = receiverOf(webhook, 'createWebHandler');
  return async function svcWebHandler(request: Request): Promise<Response> {
    const answer = await receiveRequest(receiver, request);
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  };
}
