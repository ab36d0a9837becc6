import type { IncomingMessage, ServerResponse } from 'node:http';
import { matchRequest, type PathPattern } from '../../internal/request/path-pattern';
import { isSigned, notePassedBy } from './misrouted';
import { attachReceiver, type WebhookReceiver } from '../webhook-receiver';
import { NODE_REQUEST, sendOutcome } from './node-request';

/**
 * An Express middleware, which is also a plain node:http handler when `next` answers 404.
 * Express's Request and Response extend these types, so `app.use()` and `app.post()` accept it.
 */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

type ExpressRequest = IncomingMessage & { originalUrl?: string; route?: { stack?: Array<{ handle?: unknown }> } };

/**
 * Which requests are deliveries: a POST to `path`, relative to where the middleware is mounted
 * (`app.use('/api', webhook)` answers `/api/webhooks/board`) or as the full path, or any POST when
 * this middleware is a handler of the matched route (`app.post('/x', mw)`). Express leaves
 * `req.route` set after an earlier route called next(), so the route counts only if this very
 * middleware is in its stack.
 */
export function isDeliveryRequest(req: IncomingMessage, pattern: PathPattern, self: Middleware): boolean {
  if (req.method !== 'POST') return false;
  const r = req as ExpressRequest;
  // The path first: a delivery to it never reads `req.route`, a property Express's request lacks
  // until a route matched, whose every miss walks the whole prototype chain.
  if (matchRequest(pattern, r) !== undefined) return true;
  return r.route?.stack?.some((layer) => layer.handle === self) === true;
}

/**
 * The Express adapter: deliveries go to the receiver, every other request to `next()`. The
 * middleware is the webhook object: the other adapters find its receiver through it.
 */
export function expressMiddleware(name: string, receiver: WebhookReceiver): Middleware {
  const { pattern } = receiver;
  const mounts = new Set<string>();
  const middleware: Middleware = (req, res, next) => {
    // Express knows the mount path only now: where the webhook answers is logged once per mount.
    const at = (req as { baseUrl?: string }).baseUrl ?? '';
    if (!mounts.has(at) && mounts.size < 8) {
      mounts.add(at);
      receiver.mounted(`${at}${receiver.path === '/' && at !== '' ? '' : receiver.path}`, at);
    }
    if (!isDeliveryRequest(req, pattern, middleware)) {
      if (isSigned(req)) notePassedBy(req, res, receiver);
      next();
      return;
    }
    receiver.receive(req, NODE_REQUEST).then((outcome) => sendOutcome(res, outcome), next);
  };
  Object.defineProperty(middleware, 'name', { value: name });
  attachReceiver(middleware, receiver);
  return middleware;
}
