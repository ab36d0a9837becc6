import express from 'express';
import type { RequestListener } from 'node:http';
import pino from 'pino';
import { svcBoardWebhook } from '../../src';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';

/**
 * The default mount given `pino()` as its logger: pino's own default destination writes each line as
 * soon as it is logged (one asynchronous write per line). Beside the default mount, whose logger
 * writes in batches, it shows what the batching saves.
 */
export function createListener(): RequestListener {
  const app = express();
  app.use(svcBoardWebhook({ secret: SVC_SECRET, logger: pino() }).on('task.updated', trivialHandler));
  return app;
}
