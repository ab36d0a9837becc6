import express from 'express';
import type { RequestListener } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { STANDARD_SECRET } from '../signing';
import { reply } from './floor';
import { trivialHandler } from './handler';

/** The Standard Webhooks reference library in an Express route, with express.raw() for the bytes. */
export function createListener(): RequestListener {
  const webhook = new Webhook(STANDARD_SECRET);
  const app = express();
  app.post('/webhooks/board', express.raw({ type: 'application/json', limit: '512kb' }), (req, res) => {
    try {
      webhook.verify(req.body as Buffer, req.headers as Record<string, string>);
    } catch {
      return reply(res, 401, '{}');
    }
    trivialHandler();
    reply(res, 200);
  });
  return app;
}
