import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware } from './http-middleware';

const NOT_FOUND = '{"ok":false,"code":"not_found","message":"no webhook is mounted at this path"}';

/**
 * The middleware as a plain node:http request listener, for servers without Express:
 * `http.createServer(createNodeHandler(svcBoardWebhook(secret)))`. A request the middleware does not
 * take (another path or method) is answered 404, as Express would when no route matches.
 */
export function createNodeHandler(middleware: Middleware): (req: IncomingMessage, res: ServerResponse) => void {
  return function svcNodeHandler(req, res) {
    middleware(req, res, (err?: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // The middleware passes an error on only when it could not answer at all.
      res.statusCode = err === undefined ? 404 : 500;
      const body = err === undefined ? NOT_FOUND : '{"ok":false,"code":"internal_error","message":"internal error"}';
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', Buffer.byteLength(body));
      res.end(body);
    });
  };
}
