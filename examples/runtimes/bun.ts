/**
 * Bun: `bun run bun.ts`. Bun resolves `svc-webhooks` to the Node build (node:crypto verifies
 * synchronously there); every default works: the pino logger on stdout, the memory store (one
 * process: a retry that reaches another instance runs its handlers again unless you give a shared
 * store, such as the Redis store).
 */
import { createWebHandler, svcBoardWebhook } from '../../src'; // in your project: from 'svc-webhooks'

declare const Bun: { serve(options: { port: number; fetch: (request: Request) => Promise<Response> }): unknown };

const board = svcBoardWebhook(process.env.SVC_BOARD_WEBHOOK_SECRET!).on('task.created', async (event, ctx) => {
  ctx.log.info({ task: event.task.key }, 'task created');
});

Bun.serve({ port: 3000, fetch: createWebHandler(board) });
