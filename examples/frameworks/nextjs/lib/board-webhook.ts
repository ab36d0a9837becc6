/** The board webhook of a Next.js app, made once per server process and shared by its route. */
import pino from 'pino';
import { svcBoardWebhook } from '../../../../src'; // in your project: from 'svc-webhooks'

export const board = svcBoardWebhook({
  secret: process.env.SVC_BOARD_WEBHOOK_SECRET!,
  logger: pino({ level: process.env.LOG_LEVEL ?? 'info' }),
}).on('task.created', async (event, ctx) => {
  ctx.log.info({ task: event.task.key }, 'task created');
});
