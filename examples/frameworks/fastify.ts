/**
 * Fastify: `fastifyWebhook(webhook)` is a plugin with one POST route at the webhook's path. In its
 * own (encapsulated) context no body parser runs, so the pipeline reads the exact bytes; the app's
 * other routes keep Fastify's JSON parser.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { fastifyWebhook, type BoardWebhookMiddleware } from '../../src'; // in your project: from 'svc-webhooks'

export function createFastifyApp(board: BoardWebhookMiddleware): FastifyInstance {
  const app = Fastify();
  app.register(fastifyWebhook(board)); // POST /webhooks/board
  app.post('/api/notes', async (request) => ({ received: request.body })); // parsed as usual
  return app;
}

// const board = svcBoardWebhook(process.env.SVC_BOARD_WEBHOOK_SECRET!).on('task.created', async (event) => { ... });
// await createFastifyApp(board).listen({ port: 3000 });
