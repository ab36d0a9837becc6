/**
 * A receiver process for the multi-process tests: a board webhook on the PostgreSQL store whose
 * handler counts its runs (outside any transaction) and writes its effect row in ctx.transaction.
 * RECEIVER_MODE makes it stop for good at a chosen point, for the test to kill it there:
 * `in-transaction` (after the effect row, before COMMIT) or `after-commit` (after ctx.transaction
 * resolved, before the receiver's own commit and answer). It prints `listening <port>` and
 * `reached <point> <delivery id>` lines on stdout.
 */
import express from 'express';
import pino from 'pino';
import { Pool } from 'pg';
import { postgresStore, svcBoardWebhook } from '../../../src';

const env = process.env;
const url = env.RECEIVER_PG_URL!;
const mode = env.RECEIVER_MODE ?? 'normal';
const counter = new Pool({ connectionString: url });
counter.on('error', () => undefined);
const store = postgresStore({ connectionString: url });
const never = new Promise<never>(() => undefined);

const board = svcBoardWebhook({
  secret: env.RECEIVER_SECRET!,
  store,
  timeoutMs: 1000,
  leaseMs: 2000,
  logger: pino({ level: 'silent' }),
}).onAny(async (event, ctx) => {
  await counter.query('INSERT INTO runs (delivery_id, pid) VALUES ($1, $2)', [event.id, process.pid]);
  await ctx.transaction(async (tx) => {
    await tx.query('INSERT INTO effects (delivery_id, pid) VALUES ($1, $2)', [event.id, process.pid]);
    if (mode === 'in-transaction') {
      process.stdout.write(`reached in-transaction ${event.id}\n`);
      await never;
    }
    // Long enough for concurrent attempts to overlap this one.
    await new Promise((r) => setTimeout(r, 30));
  });
  if (mode === 'after-commit') {
    process.stdout.write(`reached after-commit ${event.id}\n`);
    await never;
  }
});

const server = express()
  .use(board)
  .listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
  });
