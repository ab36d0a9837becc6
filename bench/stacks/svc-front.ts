import express from 'express';
import type { RequestListener } from 'node:http';
import { createNodeHandler, svcBoardWebhook } from '../../src';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';

/**
 * svc-webhooks in front of an Express app in the same server: deliveries are taken before Express
 * sees them, every other request goes on to the app (here a health route).
 */
export function createListener(): RequestListener {
  const app = express();
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  return createNodeHandler(svcBoardWebhook(SVC_SECRET).on('task.updated', trivialHandler), app);
}
