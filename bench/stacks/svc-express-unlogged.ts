import express from 'express';
import type { RequestListener } from 'node:http';
import pino from 'pino';
import { svcBoardWebhook } from '../../src';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';

/** The default mount with logging off (a pino logger at level silent): its gap to the default mount is the log line's cost. */
export function createListener(): RequestListener {
  const app = express();
  app.use(svcBoardWebhook({ secret: SVC_SECRET, logger: pino({ level: 'silent' }) }).on('task.updated', trivialHandler));
  return app;
}
