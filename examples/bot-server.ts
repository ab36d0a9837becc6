/**
 * An example receiver with both svc webhooks mounted: `npm start`.
 *
 * Secrets come from SVC_BOT_WEBHOOK_SECRET and SVC_BOARD_WEBHOOK_SECRET; without them it runs on
 * development secrets, says so, and refuses to listen on anything but this machine. It prints
 * commands that send it a signed delivery: signed here only with the development secrets, and
 * otherwise signed at send time with the secret read from the environment, so its output never
 * holds a real secret or a signature made with one.
 *
 * The delivery inspector (/inspector) shows verified bodies. Listening on this machine only, it
 * answers connections to a loopback address; listening beyond it (or with SVC_INSPECTOR=token), it
 * answers only requests that carry a random access token, made at startup and written to a file
 * only its user can read (never printed, never in a URL). SVC_INSPECTOR=off turns it off.
 *
 * Given svc's address and a token (SVC_BASE_URL, SVC_TOKEN with SVC_WATCH_BOARDS, SVC_BOT_TOKEN), it
 * also watches what svc reports for its webhooks (failing, disabled, paused...): a line in its log
 * for each change, and a panel in the inspector (watch-own-webhooks.ts).
 *
 * `npm start -- --emulate` feeds it from an emulated svc on this machine instead (emulated-svc.ts):
 * its webhooks set through svc's routes, svc's deliveries arriving every few seconds, watched.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import pino from 'pino';
import { svcBoardWebhook, svcBotWebhook } from '../src';
import { deliveryInspector } from './inspector/delivery-inspector';
import { mountWebhookPanel } from './inspector/webhook-panel';
import { emulateSvc, type Emulation } from './emulated-svc';
import { watchOwnWebhooks, type Watching } from './watch-own-webhooks';
import { isLoopbackAddress } from './inspector/inspector-access';

const DEV_BOT_SECRET = 'dev-bot-webhook-secret-change-me';
const DEV_BOARD_SECRET = 'dev-board-webhook-secret-change-me';

const logger = pino({ name: 'example-bot-server' });
const botSecret = process.env.SVC_BOT_WEBHOOK_SECRET || DEV_BOT_SECRET;
const boardSecret = process.env.SVC_BOARD_WEBHOOK_SECRET || DEV_BOARD_SECRET;
const onDevSecrets = botSecret === DEV_BOT_SECRET || boardSecret === DEV_BOARD_SECRET;
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';

// The development secrets are published in this file: anyone could sign deliveries with them.
if (onDevSecrets && !['127.0.0.1', '::1', 'localhost'].includes(host)) {
  logger.fatal(
    { host },
    'refusing to listen beyond this machine on the published development secrets; set SVC_BOT_WEBHOOK_SECRET and SVC_BOARD_WEBHOOK_SECRET',
  );
  process.exit(1);
}

// A page listing recent deliveries live and why any was refused. It shows verified bodies: beyond
// this machine, only to whoever holds the access token.
const inspectorMode =
  process.env.SVC_INSPECTOR === 'off'
    ? 'off'
    : process.env.SVC_INSPECTOR === 'token' || !(host === 'localhost' || isLoopbackAddress(host))
      ? 'token'
      : 'loopback';
const access = inspectorMode === 'token' ? accessTokenFile() : undefined;
const inspector = inspectorMode === 'off' ? undefined : deliveryInspector(access === undefined ? { logger } : { accessToken: access.token, logger });
const record = (r: Parameters<NonNullable<typeof inspector>['add']>[0]): void => inspector?.add(r);

const board = svcBoardWebhook({ secret: boardSecret, logger })
  .onDelivery(record)
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
  .onDelivery(record)
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

// What svc reports for these webhooks, when given a token: never silently disabled. With --emulate,
// the watcher starts once the emulated svc is up, and the panel reads it from then on.
const emulate = process.argv.includes('--emulate');
let emulation: Emulation | undefined;
const secrets = { board: boardSecret, bot: botSecret, development: onDevSecrets };
let watching: Watching = emulate ? { off: 'Starting the emulated svc.' } : watchOwnWebhooks(process.env, secrets, logger);
if (inspector)
  mountWebhookPanel(
    inspector,
    emulate ? { statuses: () => ('watcher' in watching ? watching.watcher.statuses() : []) } : 'watcher' in watching ? watching.watcher : watching,
  );

const app = express();
app.use(bot);
app.use(board);
if (inspector) app.use(inspector.router);
app.get('/', (_req, res) => {
  res.json({ ok: true, webhooks: { bot: bot.path, board: board.path }, inspector: inspector?.path ?? null });
});

const server = app.listen(port, host, () => {
  const { port: actual } = server.address() as AddressInfo;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${actual}`;
  logger.info({ url: base, bot: bot.path, board: board.path, inspector: inspector?.path ?? 'off' }, 'listening');
  if (onDevSecrets) {
    logger.warn('running on development webhook secrets; set SVC_BOT_WEBHOOK_SECRET and SVC_BOARD_WEBHOOK_SECRET for real deliveries');
  }
  printHints(base);
  if (emulate) startEmulation(base);
});

function startEmulation(base: string): void {
  emulateSvc(base, { boardPath: board.path, botPath: bot.path, boardSecret, botSecret }, logger).then(
    (started) => {
      emulation = started;
      watching = watchOwnWebhooks({ ...process.env, ...started.env }, secrets, logger);
    },
    (err: unknown) => logger.error({ err }, 'the emulated svc could not start'),
  );
}

/** A random token in a new file only this user can read; its path is printed, the token never is. */
function accessTokenFile(): { token: string; file: string; dir: string } {
  const token = randomBytes(32).toString('base64url');
  const dir = mkdtempSync(join(tmpdir(), 'svc-inspector-'));
  const file = join(dir, 'access-token');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { token, file, dir };
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Commands that send the server a delivery. On the development secrets, a bot command signed here
 * (ready to paste) and a board ping signed with openssl at send time. On real secrets nothing is
 * signed here: the commands read the secret from the environment when they run.
 */
function printHints(base: string): void {
  const through = access === undefined ? '; behind a proxy or tunnel, SVC_INSPECTOR=token' : '';
  const lines = [
    '',
    inspector ? `Watch deliveries arrive live: ${base}${inspector.path} (SVC_INSPECTOR=off turns it off${through})` : 'The delivery inspector is off.',
    '',
  ];
  if (access !== undefined) {
    lines.splice(
      2,
      0,
      `The inspector needs its access token: it is in ${access.file} (readable by you only). Enter it on the page, or send "Authorization: Bearer <token>".`,
    );
  }
  if (botSecret === DEV_BOT_SECRET) {
    const body = JSON.stringify(commandUpdate());
    const signature = createHmac('sha256', botSecret).update(body).digest('hex');
    lines.push(
      'Send it a signed bot command (a second send is answered as a duplicate):',
      `curl -sS -X POST ${base}${bot.path} -H 'Content-Type: application/json' -H 'X-Svc-Delivery: ${JSON.parse(body).id}' -H 'X-Svc-Signature: sha256=${signature}' --data-binary ${shellQuote(body)}`,
      '',
    );
  } else {
    lines.push(
      'Send it a bot command, signed at send time with SVC_BOT_WEBHOOK_SECRET:',
      `npx svc-webhooks send messageCreate.command --url ${base}${bot.path}`,
      '',
    );
  }
  // The board secret is read when the command runs: from the shell's environment, or the published development one.
  const secretSource = boardSecret === DEV_BOARD_SECRET ? shellQuote(DEV_BOARD_SECRET) : '"$SVC_BOARD_WEBHOOK_SECRET"';
  lines.push(
    `Send it a signed board ping (the timestamp must be fresh, so sign at send time${boardSecret === DEV_BOARD_SECRET ? '' : ' with SVC_BOARD_WEBHOOK_SECRET'}):`,
    `id=$(node -p 'crypto.randomUUID()'); ts=$(date +%s); body='{"id":"'$id'","type":"ping","version":1,"sequence":0,"occurred_at":"2026-01-01T00:00:00Z","workspace_id":"${randomUUID()}","board":{"id":"${randomUUID()}","key":"ENG","name":"Engineering"},"actor":null,"rule":null,"changes":[],"task":null,"comment":null,"task_url":""}'; ` +
      `sig=$(printf '%s' "$ts.$body" | openssl dgst -sha256 -hmac ${secretSource} | sed 's/^.* //'); ` +
      `curl -sS -X POST ${base}${board.path} -H 'Content-Type: application/json' -H "X-Svc-Delivery: $id" -H 'X-Svc-Event: ping' -H "X-Svc-Timestamp: $ts" -H "X-Svc-Signature: v1=$sig" --data-binary "$body"`,
    '',
  );
  process.stdout.write(lines.join('\n') + '\n');
}

function commandUpdate(): object {
  const botUserId = randomUUID();
  return {
    id: randomUUID(),
    botUserId,
    createdAt: new Date().toISOString(),
    event: {
      messageCreate: {
        workspaceId: randomUUID(),
        message: {
          id: randomUUID(),
          roomId: randomUUID(),
          authorId: randomUUID(),
          content: '/deploy staging',
          command: { botUserId, name: 'deploy', args: 'staging' },
        },
      },
    },
  };
}

function shutdown(): void {
  logger.info('shutting down: finishing running handlers');
  inspector?.close();
  if (access !== undefined) rmSync(access.dir, { recursive: true, force: true });
  void Promise.all([bot.close(), board.close(), 'watcher' in watching ? watching.watcher.close() : undefined, emulation?.close()]).then(() =>
    server.close(() => process.exit(0)),
  );
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
