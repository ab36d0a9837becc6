/**
 * Next.js App Router on the edge runtime: app/api/webhooks/board-edge/route.ts. Next.js bundles edge
 * routes with the `edge-light` condition, which gives it svc-webhooks' Fetch build (WebCrypto
 * verifies the signatures; no Node module is imported). The Node.js route beside it
 * (../board/route.ts) is the same webhook on the Node.js runtime.
 *
 * Each edge isolate has its own memory, and the default store (memory) de-duplicates within one
 * only: a store shared between isolates is yours to provide (a `DeliveryStore` over your key-value
 * service).
 */
import { createWebHandler, svcBoardWebhook } from '../../../../../../../src/web'; // in your project: from 'svc-webhooks'

const board = svcBoardWebhook(process.env.SVC_BOARD_WEBHOOK_SECRET!).on('task.created', async (event, ctx) => {
  ctx.log.info({ task: event.task.key }, 'task created');
});

export const POST = createWebHandler(board);
export const runtime = 'edge';
