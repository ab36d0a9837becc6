import type { RequestListener } from 'node:http';
import { createNodeHandler, svcBoardWebhook, svcBotWebhook } from '../../src';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';

/** The same pipeline as svc-express, as a plain node:http handler: what it costs without Express. */
export function createListener(webhook: 'board' | 'bot'): RequestListener {
  return createNodeHandler(
    webhook === 'board' ? svcBoardWebhook(SVC_SECRET).on('task.updated', trivialHandler) : svcBotWebhook(SVC_SECRET).on('messageCreate', trivialHandler),
  );
}
