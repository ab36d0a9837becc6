import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestPathname, type PathPattern } from '../internal/path-pattern';
import type { Outcome } from '../receive/receiver';

/**
 * An Express middleware, which is also a plain node:http handler when `next` answers 404.
 * Express's Request and Response extend these types, so `app.use()` and `app.post()` accept it.
 */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

type ExpressRequest = IncomingMessage & { originalUrl?: string; route?: { stack?: Array<{ handle?: unknown }> } };

/**
 * Which requests are deliveries: a POST to `path` (the full URL path, so mount points do not
 * change it), or any POST when this middleware is a handler of the matched route
 * (`app.post('/x', mw)`). Express leaves `req.route` set after an earlier route called next(),
 * so the route counts only if this very middleware is in its stack.
 */
export function isDeliveryRequest(req: IncomingMessage, pattern: PathPattern, self: Middleware): boolean {
  if (req.method !== 'POST') return false;
  const r = req as ExpressRequest;
  if (r.route?.stack?.some((layer) => layer.handle === self)) return true;
  return pattern.match(requestPathname(r)) !== undefined;
}

/** Which middleware answers which path: the node:http handler answers 405 to other methods there. */
export const WEBHOOK_PATH: unique symbol = Symbol('svc-webhooks path');
export type WithPath = Middleware & { [WEBHOOK_PATH]?: PathPattern };

export function sendOutcome(res: ServerResponse, outcome: Outcome): void {
  if (res.headersSent) return;
  res.statusCode = outcome.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(outcome.body));
  if (outcome.retryAfter !== undefined) res.setHeader('Retry-After', String(outcome.retryAfter));
  if (outcome.closeConnection) res.setHeader('Connection', 'close');
  res.end(outcome.body);
}

export function httpMiddleware(name: string, pattern: PathPattern, receive: (req: IncomingMessage) => Promise<Outcome>): Middleware {
  const middleware: WithPath = (req, res, next) => {
    if (!isDeliveryRequest(req, pattern, middleware)) {
      next();
      return;
    }
    receive(req).then((outcome) => sendOutcome(res, outcome), next);
  };
  Object.defineProperty(middleware, 'name', { value: name });
  Object.defineProperty(middleware, WEBHOOK_PATH, { value: pattern });
  return middleware;
}
