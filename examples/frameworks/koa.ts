/**
 * Koa: receive deliveries in front of the Koa app with `createNodeHandler(webhook, app.callback())`;
 * every other request goes on to Koa, whose body parsers never see a delivery.
 */
import http from 'node:http';
import Koa from 'koa';
import { createNodeHandler, type BoardWebhookMiddleware } from '../../src'; // in your project: from 'svc-webhooks'

export function createKoaServer(board: BoardWebhookMiddleware): http.Server {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { ok: true, path: ctx.path };
  });
  return http.createServer(createNodeHandler(board, app.callback())); // POST /webhooks/board
}
