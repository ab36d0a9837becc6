/**
 * Cloudflare Workers, with or without Node.js compatibility: no `nodejs_compat` flag is needed.
 * Wrangler bundles with the `workerd` condition, which gives it svc-webhooks' Fetch build (WebCrypto
 * verifies the signatures; no Node module is imported). The secret is a binding, known once the
 * first request arrives, so the webhook is made then and kept for the isolate's life.
 *
 * Each isolate has its own memory, and the default store (memory) de-duplicates within one isolate
 * only: a retry that reaches another isolate runs its handlers again. A store shared between
 * isolates is yours to provide: a `DeliveryStore` over Workers KV, a Durable Object or a database.
 * Until a `store` is given, the webhook logs one warning at setup saying so.
 */
import { createWebHandler, svcBoardWebhook, type BoardWebhookMiddleware, type WebHandler } from '../../src/web'; // in your project: from 'svc-webhooks'

export interface Env {
  SVC_BOARD_WEBHOOK_SECRET: string;
}

export function boardWebhook(env: Env): BoardWebhookMiddleware {
  return svcBoardWebhook(env.SVC_BOARD_WEBHOOK_SECRET).on('task.created', async (event, ctx) => {
    ctx.log.info({ task: event.task.key }, 'task created');
  });
}

let handle: WebHandler | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    handle ??= createWebHandler(boardWebhook(env));
    return handle(request);
  },
};
