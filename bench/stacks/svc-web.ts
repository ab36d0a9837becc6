import { getRequestListener } from '@hono/node-server';
import type { RequestListener } from 'node:http';
import { createWebHandler, svcBoardWebhook } from '../../src';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';

/**
 * The same pipeline as a Fetch handler, `createWebHandler`, on Node: @hono/node-server (the
 * usual adaptor, also under Hono on Node) turns each node:http request into a `Request` and the
 * `Response` back. What a Next.js or Hono user on Node pays beside the node:http mount.
 */
export function createListener(): RequestListener {
  const handle = createWebHandler(svcBoardWebhook(SVC_SECRET).on('task.updated', trivialHandler));
  return getRequestListener(handle) as RequestListener;
}
