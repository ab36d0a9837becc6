/**
 * Cloudflare Workers, with or without Node.js compatibility: no `nodejs_compat` flag is needed.
 * Wrangler bundles with the `workerd` condition, which gives it svc-webhooks' Fetch build (WebCrypto
 * verifies the signatures; no Node module is imported). The secret is a binding, known once the
 * first request arrives, so the webhook is made then and kept for the isolate's life.
 *
 * Each isolate has its own memory, so the delivery ids are kept in Durable Objects, which every
 * isolate reaches: the Worker exports the package's `SvcDedupObject` class and `wrangler.toml` binds
 * it as `SVC_DEDUP` (docs/deduplication.md, "The Durable Object store"):
 *
 *   durable_objects.bindings = [{ name = "SVC_DEDUP", class_name = "SvcDedupObject" }]
 *   [[migrations]]
 *   tag = "svc-dedup-v1"
 *   new_sqlite_classes = ["SvcDedupObject"]
 */
import { createWebHandler, durableObjectStore, svcBoardWebhook, type BoardWebhookMiddleware, type DedupObjectNamespace, type WebHandler } from '../../src/web'; // in your project: from 'svc-webhooks'

export { SvcDedupObject } from '../../src/web';

export interface Env {
  SVC_BOARD_WEBHOOK_SECRET: string;
  SVC_DEDUP: DedupObjectNamespace;
}

export function boardWebhook(env: Env): BoardWebhookMiddleware {
  return svcBoardWebhook({ secret: env.SVC_BOARD_WEBHOOK_SECRET, store: durableObjectStore(env.SVC_DEDUP) }).on('task.created', async (event, ctx) => {
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
