import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestPathname } from '../../internal/request/path-pattern';
import type { Middleware } from './express-middleware';
import { receiverOf } from '../webhook-receiver';
import { isSigned, notePassedBy } from './misrouted';
import { NODE_REQUEST, sendOutcome } from './node-request';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

const NOT_FOUND = '{"ok":false,"code":"not_found","message":"no webhook is mounted at this path"}';
const METHOD_NOT_ALLOWED = '{"ok":false,"code":"method_not_allowed","message":"the webhook path takes POST only"}';
const INTERNAL = '{"ok":false,"code":"internal_error","message":"internal error"}';

/**
 * A webhook as a plain node:http request listener: a POST to its `path` is a delivery. Requests it
 * does not take (another path or method) go to `fallback` when one is given. Without one, another
 * method on the webhook path is answered 405 with `Allow: POST`, and any other path 404.
 *
 * With an Express app as the fallback, deliveries are received in front of Express instead of inside
 * it: `http.createServer(createNodeHandler(svcBoardWebhook(secret), app))`. Express re-wires every
 * request it handles (it swaps the prototypes of `req` and `res`), which makes each later operation
 * on them slower; a delivery that never enters Express does not pay for that.
 */
export function createNodeHandler(webhook: Middleware, fallback?: Listener): Listener {
  const receiver = receiverOf(webhook, 'createNodeHandler');
  const { pattern } = receiver;
  return function svcNodeHandler(req, res) {
    const onPath = pattern.match(requestPathname(req)) !== undefined;
    if (onPath && req.method === 'POST') {
      receiver.receive(req, NODE_REQUEST).then(
        (outcome) => sendOutcome(res, outcome),
        () => answer(res, 500, INTERNAL),
      );
    } else {
      // A signed POST to another path: one warning when it ends in a 404, here or in the fallback.
      if (!onPath && isSigned(req)) notePassedBy(req, res, receiver);
      if (fallback !== undefined) fallback(req, res);
      else if (onPath) answer(res, 405, METHOD_NOT_ALLOWED, 'POST');
      else answer(res, 404, NOT_FOUND);
    }
  };
}

function answer(res: ServerResponse, status: number, body: string, allow?: string): void {
  // The receiver fails only when it could not answer at all; a half-sent answer is cut off.
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.statusCode = status;
  if (allow !== undefined) res.setHeader('Allow', allow);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
