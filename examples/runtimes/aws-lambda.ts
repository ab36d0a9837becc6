/**
 * AWS Lambda, behind API Gateway (a REST API or an HTTP API), a Function URL or an Application Load
 * Balancer: one handler takes the events of all four and answers each in its own shape. The body is
 * verified as the bytes svc sent, decoded from base64 when the event says so.
 *
 * One instance of the function handles one request at a time, and a retry of svc may land on
 * another instance: with the default store (memory) each instance de-duplicates alone. Give the
 * webhook a store the instances share (`redisStore`, `postgresStore`) for "handled once".
 */
import { createLambdaHandler, svcBoardWebhook } from '../../src'; // in your project: from 'svc-webhooks'

// Made once per instance, outside the handler: its store and handlers live as long as the instance.
export const board = svcBoardWebhook(process.env.SVC_BOARD_WEBHOOK_SECRET!).on('task.created', async (event, ctx) => {
  ctx.log.info({ task: event.task.key }, 'task created');
});

export const handler = createLambdaHandler(board);
