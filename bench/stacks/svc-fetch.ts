import { createWebHandler, svcBoardWebhook } from '../../src';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';

/** The pipeline as a Fetch handler, `createWebHandler`, with every default: what a Hono, Next.js or Bun user mounts. */
export function createFetch(): (request: Request) => Promise<Response> {
  return createWebHandler(svcBoardWebhook(SVC_SECRET).on('task.updated', trivialHandler));
}
