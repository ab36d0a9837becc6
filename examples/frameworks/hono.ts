/**
 * Hono: `createWebHandler(webhook)` takes the Fetch `Request` (`c.req.raw`) and returns the
 * `Response`. Give it the request before anything reads the body (no `c.req.json()` first).
 */
import { Hono } from 'hono';
import { createWebHandler, type BoardWebhookMiddleware } from '../../src'; // in your project: from 'svc-webhooks'

export function createHonoApp(board: BoardWebhookMiddleware): Hono {
  const app = new Hono();
  const receive = createWebHandler(board);
  app.post('/webhooks/board', (c) => receive(c.req.raw));
  return app;
}

// On Node: import { serve } from '@hono/node-server'; serve({ fetch: createHonoApp(board).fetch, port: 3000 });
// On Bun and Deno: export default createHonoApp(board); / Deno.serve(createHonoApp(board).fetch);
