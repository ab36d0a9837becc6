import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware } from './http-middleware';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

const NOT_FOUND = '{"ok":false,"code":"not_found","message":"no webhook is mounted at this path"}';
const INTERNAL = '{"ok":false,"code":"internal_error","message":"internal error"}';

/**
 * The middleware as a plain node:http request listener. Requests it does not take (another path or
 * method) go to `fallback` when one is given, or are answered 404.
 *
 * With an Express app as the fallback, deliveries are received in front of Express instead of inside
 * it: `http.createServer(createNodeHandler(svcBoardWebhook(secret), app))`. Express re-wires every
 * request it handles (it swaps the prototypes of `req` and `res`), which makes each later operation
 * on them slower; a delivery that never enters Express does not pay for that.
 */
export function createNodeHandler(middleware: Middleware, fallback?: Listener): Listener {
  return function svcNodeHandler(req, res) {
    middleware(req, res, (err?: unknown) => {
      if (err === undefined && fallback !== undefined) {
        fallback(req, res);
        return;
      }
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // The middleware passes an error on only when it could not answer at all.
      const body = err === undefined ? NOT_FOUND : INTERNAL;
      res.statusCode = err === undefined ? 404 : 500;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', Buffer.byteLength(body));
      res.end(body);
    });
  };
}
