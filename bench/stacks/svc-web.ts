import { getRequestListener } from '@hono/node-server';
import type { RequestListener } from 'node:http';
import { createFetch } from './svc-fetch';

/**
 * The Fetch handler on node: @hono/node-server (the usual adaptor, also under Hono on Node) turns
 * each node:http request into a `Request` and the `Response` back. What a Next.js or Hono user on
 * Node pays beside the node:http mount.
 */
export function createListener(): RequestListener {
  return getRequestListener(createFetch()) as RequestListener;
}
