import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestPathname } from '../internal/path-pattern';
import { WEBHOOK_PATH, type Middleware, type WithPath } from './http-middleware';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

const NOT_FOUND = '{"ok":false,"code":"not_found","message":"no webhook is mounted at this path"}';
const METHOD_NOT_ALLOWED = '{"ok":false,"code":"method_not_allowed","message":"the webhook path takes POST only"}';
const INTERNAL = '{"ok":false,"code":"internal_error","message":"internal error"}';

/**
 * The middleware as a plain node:http request listener. Requests it does not take (another path or
 * method) go to `fallback` when one is given. Without one, another method on the webhook path is
 * answered 405 with `Allow: POST`, and any other path 404.
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
      const wrongMethod = err === undefined && (middleware as WithPath)[WEBHOOK_PATH]?.match(requestPathname(req)) !== undefined;
      const body = err !== undefined ? INTERNAL : wrongMethod ? METHOD_NOT_ALLOWED : NOT_FOUND;
      res.statusCode = err !== undefined ? 500 : wrongMethod ? 405 : 404;
      if (wrongMethod) res.setHeader('Allow', 'POST');
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', Buffer.byteLength(body));
      res.end(body);
    });
  };
}
