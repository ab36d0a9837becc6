import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { readBody, reply, verifyAndParse } from './floor';
import { trivialHandler } from './handler';

/** Plain node:http: the cheapest correct receiver. */
export function createListener(): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST' || req.url !== '/webhooks/board') return reply(res, 404, '{}');
    readBody(req).then(
      (body) => {
        const payload = verifyAndParse(req.headers, body);
        if (payload === undefined) return reply(res, 401, '{}');
        trivialHandler();
        reply(res, 200);
      },
      () => reply(res, 400, '{}'),
    );
  };
}
