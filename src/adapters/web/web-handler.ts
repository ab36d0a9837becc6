import type { Outcome } from '../../receive/receiver';
import type { Middleware } from '../node/express-middleware';
import { receiverOf } from '../webhook-receiver';
import { WEB_REQUEST } from './web-request';

/** A Fetch API request handler: Next.js route handlers, Hono, Bun.serve, Deno.serve, Workers. */
export type WebHandler = (request: Request) => Promise<Response>;

const METHOD_NOT_ALLOWED: Outcome = { status: 405, body: '{"ok":false,"code":"method_not_allowed","message":"webhook deliveries are POST requests"}' };
const INTERNAL: Outcome = { status: 500, body: '{"ok":false,"code":"internal_error","message":"internal error"}' };

/**
 * A webhook as a `(request: Request) => Promise<Response>` handler, with the same pipeline, answers
 * and options as its Express mount. It answers every POST it is given: the framework's router (or
 * the file's place, in Next.js) decides the path. The body is read as a stream within `limit`.
 */
export function createWebHandler(webhook: Middleware): WebHandler {
  const receiver = receiverOf(webhook, 'createWebHandler');
  return async function svcWebHandler(request: Request): Promise<Response> {
    if (request.method !== 'POST') return respond(METHOD_NOT_ALLOWED, 'POST');
    let outcome: Outcome;
    try {
      outcome = await receiver.receive(request, WEB_REQUEST);
    } catch {
      outcome = INTERNAL;
    }
    // Refused before the body was read (forged, oversized): let the runtime drop the rest unread.
    if (outcome.closeConnection && request.body !== null && !request.bodyUsed) request.body.cancel().catch(() => undefined);
    return respond(outcome);
  };
}

function respond(outcome: Outcome, allow?: string): Response {
  const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' };
  if (outcome.retryAfter !== undefined) headers['Retry-After'] = String(outcome.retryAfter);
  if (allow !== undefined) headers.Allow = allow;
  return new Response(outcome.body, { status: outcome.status, headers });
}
