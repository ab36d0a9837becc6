import type { IncomingMessage } from 'node:http';

export { BODY_TIMEOUT_MS, checkContentHeaders } from './body-bounds';

/**
 * What the Fetch build (`dist/web.mjs`) has in place of `read-raw-body.ts`: raw-body needs Node's
 * streams, and a Fetch runtime has no Node request to read. A webhook mounted there as Express or
 * node:http middleware says so instead of failing on a missing module.
 */
export function readRawBody(_req: IncomingMessage, _limit: number): Promise<Buffer> {
  return Promise.reject(
    new TypeError(
      'svc-webhooks: this is the build for Fetch runtimes, which reads Fetch requests only: use createWebHandler(webhook), or the Node build on Node',
    ),
  );
}
