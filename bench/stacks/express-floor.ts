import express from 'express';
import type { RequestListener } from 'node:http';
import { readBody, reply, verifyAndParse } from './floor';
import { trivialHandler } from './handler';

/** One Express 5 route doing the floor's work by hand: the floor for any Express receiver. */
export function createListener(): RequestListener {
  const app = express();
  app.post('/webhooks/board', (req, res) => {
    readBody(req).then(
      (body) => {
        const payload = verifyAndParse(req.headers, body);
        if (payload === undefined) return reply(res, 401, '{}');
        trivialHandler();
        reply(res, 200);
      },
      () => reply(res, 400, '{}'),
    );
  });
  return app;
}
