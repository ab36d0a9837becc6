import express from 'express';
import type { RequestListener } from 'node:http';
import { svcBoardWebhook, svcBotWebhook } from '../../src';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';

/**
 * svc-webhooks mounted as documented, with every default: the whole pipeline, the in-memory
 * de-dup store and the default pino logger at level info (its stdout is /dev/null in the bench).
 */
export function createListener(webhook: 'board' | 'bot'): RequestListener {
  const app = express();
  app.use(webhook === 'board' ? svcBoardWebhook(SVC_SECRET).on('task.updated', trivialHandler) : svcBotWebhook(SVC_SECRET).on('messageCreate', trivialHandler));
  return app;
}
