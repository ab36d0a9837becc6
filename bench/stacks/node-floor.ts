import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { receiveByHand, reply } from './floor';
import { trivialHandler } from './handler';

/** Plain node:http: the cheapest correct receiver. */
export function createListener(): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST' || req.url !== '/webhooks/board') return reply(res, 404, '{}');
    receiveByHand(req, res, trivialHandler);
  };
}
