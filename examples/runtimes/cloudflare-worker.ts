/**
 * Cloudflare Workers (with Node.js compatibility: the `nodejs_compat` flag, on by default from
 * compatibility date 2026-08-04). The secret is a binding, known once the first request arrives,
 * so the webhook is made then and kept for the isolate's life. Each isolate has its own memory: a
 * store shared between isolates (see the Redis store) is what keeps a retry from running twice.
 */
import { createWebHandler, svcBoardWebhook, type BoardWebhookMiddleware, type WebHandler } from '../../src'; // in your project: from 'svc-webhooks'

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
