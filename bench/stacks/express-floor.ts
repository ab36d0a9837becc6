import express from 'express';
import type { RequestListener } from 'node:http';
import { receiveByHand } from './floor';
import { trivialHandler } from './handler';

/** One Express 5 route doing the floor's work by hand: the floor for any Express receiver. */
export function createListener(): RequestListener {
  const app = express();
  app.post('/webhooks/board', (req, res) => receiveByHand(req, res, trivialHandler));
  return app;
}
