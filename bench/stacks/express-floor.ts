import express from 'express';
import type { RequestListener } from 'node:http';
import { receiveByHand } from './floor';
import { trivialHandler } from './handler';

/**
 * The lean Express floor: one `app.use()` middleware, mounted the way svc-webhooks and
 * @octokit/webhooks are, doing the floor's work by hand for POSTs to the webhook path.
 */
export function createListener(): RequestListener {
  const app = express();
  app.use((req, res, next) => {
    if (req.method !== 'POST' || req.url !== '/webhooks/board') return next();
    receiveByHand(req, res, trivialHandler);
  });
  return app;
}
