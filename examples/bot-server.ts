/**
 * An example receiver with both svc webhooks mounted: `npm start`.
 *
 * Secrets come from SVC_BOT_WEBHOOK_SECRET and SVC_BOARD_WEBHOOK_SECRET; without them it runs on
 * development secrets and says so. It prints ready-to-run curl commands that send it a signed delivery.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import { svcBoardWebhook, svcBotWebhook } from '../src';
import { deliveryInspector } from './inspector/delivery-inspector';

const DEV_BOT_SECRET = 'dev-bot-webhook-secret-change-me';
const DEV_BOARD_SECRET = 'dev-board-webhook-secret-change-me';

const logger = pino({ name: 'example-bot-server' });
const botSecret = process.env.SVC_BOT_WEBHOOK_SECRET || DEV_BOT_SECRET;
const boardSecret = process.env.SVC_BOARD_WEBHOOK_SECRET || DEV_BOARD_SECRET;
// A page listing recent deliveries live and why any was refused; it shows verified bodies, so keep the server on a private host.
const inspector = deliveryInspector();

const board = svcBoardWebhook({ secret: boardSecret, logger })
  .onDelivery(inspector.add)
  .on('task.created', (event, ctx) => {
    ctx.log.info({ task: event.task.key, title: event.task.title }, 'task created');
  })
  .on('task.updated', (event, ctx) => {
    for (const change of event.changes) ctx.log.info({ task: event.task.key, field: change.field }, 'task changed');
  })
  .on(['task.comment.created', 'task.comment.updated'], (event, ctx) => {
    ctx.log.info({ task: event.task.key, comment: event.comment.id }, 'comment written');
  })
  .on('task.moved_out', (event, ctx) => {
    ctx.log.info({ task: event.task.key }, 'task left the board');
  })
  .on('ping', (_event, ctx) => {
    ctx.log.info('ping received: the board webhook is wired up');
  });

const bot = svcBotWebhook({ secret: botSecret, logger })
  .onDelivery(inspector.add)
  .on('messageCreate', (data, ctx) => {
    ctx.log.info({ room: data.message.roomId, length: data.message.content.length }, 'message received');
  })
  .command('deploy', (data, ctx) => {
    ctx.log.info({ args: data.message.command.args }, 'deploy command received');
  })
  .command('ping', (_data, ctx) => {
    ctx.log.info('ping command received');
  })
  .on('botCallback', (data, ctx) => {
    ctx.log.info({ data: data.data }, 'button pressed');
  })
  .onAny((_data, ctx) => {
    ctx.log.debug({ kind: ctx.kind }, 'update received');
  });

const app = express();
app.use(bot);
app.use(board);
app.use(inspector.router);
app.get('/', (_req, res) => {
  res.json({ ok: true, webhooks: { bot: bot.path, board: board.path }, inspector: inspector.path });
});

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const server = app.listen(port, host, () => {
  const { port: actual } = server.address() as AddressInfo;
  const base = `http://${host}:${actual}`;
  logger.info({ url: base, bot: bot.path, board: board.path, inspector: inspector.path }, 'listening');
  if (botSecret === DEV_BOT_SECRET || boardSecret === DEV_BOARD_SECRET) {
    logger.warn('running on development webhook secrets; set SVC_BOT_WEBHOOK_SECRET and SVC_BOARD_WEBHOOK_SECRET for real deliveries');
  }
  printHints(base);
});

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A signed bot command, ready to paste; and a board delivery signed with openssl at send time. */
function printHints(base: string): void {
  const update = {
    id: randomUUID(),
    botUserId: randomUUID(),
    createdAt: new Date().toISOString(),
    event: {
      messageCreate: {
        workspaceId: randomUUID(),
        message: { id: randomUUID(), roomId: randomUUID(), authorId: randomUUID(), content: '/deploy staging', command: { botUserId: randomUUID(), name: 'deploy', args: 'staging' } },
      },
    },
  };
  const body = JSON.stringify(update);
  const signature = createHmac('sha256', botSecret).update(body).digest('hex');
  const lines = [
    '',
    `Watch deliveries arrive live: ${base}${inspector.path}`,
    '',
    'Send it a signed bot command (a second send is answered as a duplicate):',
    `curl -sS -X POST ${base}${bot.path} -H 'Content-Type: application/json' -H 'X-Svc-Delivery: ${update.id}' -H 'X-Svc-Signature: sha256=${signature}' --data-binary ${shellQuote(body)}`,
    '',
    'Send it a signed board ping (the timestamp must be fresh, so sign at send time):',
    `id=$(node -p 'crypto.randomUUID()'); ts=$(date +%s); body='{"id":"'$id'","type":"ping","version":1,"sequence":0,"occurred_at":"2026-01-01T00:00:00Z","workspace_id":"${randomUUID()}","board":{"id":"${randomUUID()}","key":"ENG","name":"Engineering"},"actor":null,"rule":null,"changes":[],"task":null,"comment":null,"task_url":""}'; ` +
      `sig=$(printf '%s' "$ts.$body" | openssl dgst -sha256 -hmac ${shellQuote(boardSecret)} | sed 's/^.* //'); ` +
      `curl -sS -X POST ${base}${board.path} -H 'Content-Type: application/json' -H "X-Svc-Delivery: $id" -H 'X-Svc-Event: ping' -H "X-Svc-Timestamp: $ts" -H "X-Svc-Signature: v1=$sig" --data-binary "$body"`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

function shutdown(): void {
  logger.info('shutting down: finishing running handlers');
  inspector.close();
  void Promise.all([bot.close(), board.close()]).then(() => server.close(() => process.exit(0)));
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
