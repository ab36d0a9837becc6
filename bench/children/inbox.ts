/**
 * A process of the inbox measurements: `receiver` (the board webhook on 127.0.0.1, in inbox or
 * direct mode, with the Redis store) or `worker` (runs the handlers of the inbox). It talks to the
 * parent in lines on stdout: `ready [port]`, and for a worker `done <ms>` once it has handled
 * EXPECT deliveries (the time from its first handler call to the last one's end).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createNodeHandler, redisStore, svcBoardWebhook } from '../../src';
import { SVC_SECRET } from '../signing';

const role = process.argv[2];
const env = process.env;
const url = env.SVC_BENCH_REDIS_URL!;
const prefix = env.INBOX_PREFIX!;
const handlerMs = Number(env.HANDLER_MS ?? '0');
const expected = Number(env.EXPECT ?? '0');
const inbox = env.MODE === 'direct' ? undefined : { url, prefix, ordered: env.ORDERED === '1', gapWaitMs: 60_000, keepProcessedFor: 60_000 };
const board = svcBoardWebhook({
  secret: SVC_SECRET,
  logger: pino({ level: 'silent' }),
  store: redisStore({ url, prefix: `${prefix}-ids:` }),
  // Direct mode: the handler runs in the request, up to the longest deadline allowed.
  timeout: 9000,
  ...(inbox === undefined ? {} : { inbox }),
});

let handled = 0;
let first = 0;
board.onAny(async () => {
  if (first === 0) first = performance.now();
  if (handlerMs > 0) await new Promise((r) => setTimeout(r, handlerMs));
  if (++handled === expected) process.stdout.write(`done ${performance.now() - first}\n`);
});

if (role === 'receiver') {
  const server = createServer(createNodeHandler(board));
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${(server.address() as AddressInfo).port}\n`));
} else {
  board.work({ concurrency: Number(env.CONCURRENCY ?? '10') });
  process.stdout.write('ready\n');
}
