import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';
import express from 'express';
import type { RequestListener } from 'node:http';
import { OCTOKIT_SECRET } from '../signing';
import { trivialHandler } from './handler';

/** The most used peer, mounted as its README shows: it verifies, parses and routes (no de-dup, no schema). */
export function createListener(): RequestListener {
  const webhooks = new Webhooks({ secret: OCTOKIT_SECRET });
  webhooks.onAny(trivialHandler);
  const app = express();
  app.use(createNodeMiddleware(webhooks, { path: '/webhooks/board' }));
  return app;
}
