/**
 * One process of the inbox scale test: `receiver` (serves the board webhook on a loopback port and
 * enqueues) or `worker` (runs the handlers). The handler writes when each run starts and ends to
 * Redis, so the test can prove that nothing was lost and no delivery ran twice at once.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createNodeHandler, redisStore, svcBoardWebhook } from '../../../src';
import { BOARD_SECRET } from '../../support/sign';

const role = process.argv[2];
const url = process.env.REDIS_URL!;
const prefix = process.env.INBOX_PREFIX!;
const handlerMs = Number(process.env.HANDLER_MS ?? '200');
const logger = pino({ level: 'silent' });
const store = redisStore({ url, prefix: `${prefix}-ids:` });
const ordered = process.env.ORDERED === '1';
const board = svcBoardWebhook({ secret: BOARD_SECRET, logger, store, inbox: { connection: url, prefix, retryDelayMs: 100, ordered, gapWaitMs: 60_000 } });
const results = new Redis(url);

board.onAny(async (event: any) => {
  await results.rpush(`${prefix}:runs`, JSON.stringify({ id: event.id, board: event.board.id, sequence: event.sequence, pid: process.pid, start: Date.now() }));
  await new Promise((r) => setTimeout(r, handlerMs));
  await results.rpush(`${prefix}:runs`, JSON.stringify({ id: event.id, board: event.board.id, sequence: event.sequence, pid: process.pid, end: Date.now() }));
});

if (role === 'receiver') {
  const server = createServer(createNodeHandler(board));
  server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${(server.address() as AddressInfo).port}\n`));
  process.once('SIGTERM', () => server.close(() => void board.close().then(() => process.exit(0))));
} else {
  const worker = board.work({ concurrency: 2, lockDurationMs: 2500, stalledIntervalMs: 1000, maxStalledCount: Number(process.env.MAX_STALLED ?? '3') });
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
}
