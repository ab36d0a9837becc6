import express from 'express';
import type { RequestListener } from 'node:http';
import { svcBoardWebhook } from '../../src';
import { fixture } from '../bodies';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';

export const RESOLVER_BOARDS = 10_000;

/**
 * The default mount (Express 5, app.use, every default) with each board's secret looked up by a
 * resolver over 10,000 boards, as an integration that serves many boards does; beside
 * svc-board-express (one secret) in the same run. The resolver answers from a Map, as after a
 * database read, asynchronously; the lookup cache holds every board, so after the first delivery
 * each board's secret comes from the cache.
 */
export function createListener(): RequestListener {
  const benchBoard = (fixture('board', 'task.updated').board as { id: string }).id;
  const secrets = new Map<string, string>();
  for (let i = 0; secrets.size < RESOLVER_BOARDS - 1; i++)
    secrets.set(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, `board-secret-${i}-0123456789abcdef`);
  secrets.set(benchBoard, SVC_SECRET);
  const app = express();
  app.use(svcBoardWebhook({ secret: async ({ boardId }) => secrets.get(boardId) }).on('task.updated', trivialHandler));
  return app;
}
