import { getRequestListener } from '@hono/node-server';
import type { RequestListener } from 'node:http';
import { receiveFetch } from './fetch-floor';

/** The Fetch floor on node:http through @hono/node-server, the server of the svc-webhooks Fetch handler it is compared with. */
export function createListener(): RequestListener {
  return getRequestListener(receiveFetch) as RequestListener;
}
