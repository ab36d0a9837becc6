import type { IncomingMessage, ServerResponse } from 'node:http';
import { normalisePath } from '../options';
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
export function isDeliveryRequest(req: IncomingMessage, path: string, self: Middleware): boolean {
  if (req.method !== 'POST') return false;
  const r = req as ExpressRequest;
  if (r.route?.stack?.some((layer) => layer.handle === self)) return true;
  const url = r.originalUrl ?? req.url ?? '';
  const query = url.indexOf('?');
  return normalisePath(query === -1 ? url : url.slice(0, query)) === path;
}

export function sendOutcome(res: ServerResponse, outcome: Outcome): void {
  if (res.headersSent) return;
  res.statusCode = outcome.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(outcome.body));
  if (outcome.retryAfter !== undefined) res.setHeader('Retry-After', String(outcome.retryAfter));
  if (outcome.closeConnection) res.setHeader('Connection', 'close');
  res.end(outcome.body);
}

export function httpMiddleware(name: string, path: string, receive: (req: IncomingMessage) => Promise<Outcome>): Middleware {
  const middleware: Middleware = (req, res, next) => {
    if (!isDeliveryRequest(req, path, middleware)) {
      next();
      return;
    }
    receive(req).then((outcome) => sendOutcome(res, outcome), next);
  };
  Object.defineProperty(middleware, 'name', { value: name });
  return middleware;
}
