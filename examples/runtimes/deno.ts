/**
 * Deno: `deno run --allow-net --allow-env=SVC_BOARD_WEBHOOK_SECRET deno.ts`. Deno resolves
 * `npm:svc-webhooks` to the Node build (node:crypto verifies synchronously there); every default
 * works without another permission: JSON log lines through the console, the memory store (one
 * process: a retry that reaches another instance runs its handlers again unless you give a shared
 * store, such as the Redis store).
 */
import { createWebHandler, svcBoardWebhook } from '../../src'; // in your project: from 'npm:svc-webhooks'

declare const Deno: {
  env: { get(name: string): string | undefined };
  serve(options: { port: number }, handler: (request: Request) => Promise<Response>): unknown;
};

const board = svcBoardWebhook(Deno.env.get('SVC_BOARD_WEBHOOK_SECRET')!).on('task.created', async (event, ctx) => {
  ctx.log.info({ task: event.task.key }, 'task created');
});

Deno.serve({ port: 8000 }, createWebHandler(board));
