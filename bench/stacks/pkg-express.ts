import express from 'express';
import type { RequestListener } from 'node:http';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';
import { installedSvcWebhooks } from './installed';

// Loaded with this module, as a server's `require('svc-webhooks')` at its top.
const { svcBoardWebhook } = installedSvcWebhooks();

/** The default mount of svc-express (board, app.use, every default), from the installed package. */
export function createListener(): RequestListener {
  const app = express();
  app.use(svcBoardWebhook(SVC_SECRET).on('task.updated', trivialHandler));
  return app;
}
