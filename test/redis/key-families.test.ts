import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { redisStore, svcBoardWebhook, svcBotWebhook, type InboxWorker } from '../../src';
import { jobIdOf } from '../../src/inbox/inbox-job';
import { deliver, eventually, serve } from '../support/inbox';
import { silentLogger } from '../support/apps';
import { RedisServer } from '../support/redis-server';
import { BOARD_SECRET, BOT_SECRET, fixture, signBoard, signBot, type SignedRequest } from '../support/sign';

/**
 * Delivery ids and board ids are chosen by whoever holds a board's secret (with a resolver, any
 * board's admin). With the documented setup (one Redis for the de-dup store and the inbox, default
 * prefixes) and a schema policy that lets any id through, no id may reach a key the inbox or
 * BullMQ keeps: each hostile delivery below is handled, and so is everything after it.
 */
let redis: RedisServer;
let client: Redis;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  redis = await RedisServer.start({ appendOnly: false });
  client = new Redis(redis.url);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await client.flushall();
});
afterAll(async () => {
  client.disconnect();
  await redis.close();
});

/** A board webhook on the documented setup: default prefixes, one Redis, schemaPolicy 'skip'. */
async function boardOnOneRedis(inbox: Record<string, unknown> = {}) {
  const handled: Array<{ id: string; sequence: number }> = [];
  const store = redisStore({ url: redis.url });
  const board = svcBoardWebhook({
    secret: BOARD_SECRET,
    logger: silentLogger,
    schemaPolicy: 'skip',
    store,
    inbox: { connection: redis.url, retryDelayMs: 50, ...inbox },
  }).onAny((event: { id: string; sequence: number }) => {
    handled.push({ id: event.id, sequence: event.sequence });
  });
  const server = await serve(board);
  const worker: InboxWorker = board.work({ stalledIntervalMs: 500, lockDurationMs: 1000 });
  cleanups.push(
    () => store.close(),
    () => board.close(),
    () => server.close(),
    () => worker.close(),
  );
  return { handled, url: `${server.url}/webhooks/board` };
}

/**
 * A board event with the given id (and board, its task on it), signed; an id that is no header
 * value is sent without X-Svc-Delivery.
 */
function boardEvent(id: string, overrides: { sequence?: number; board?: { id: string; key: string; name: string } } = {}): SignedRequest {
  const event = fixture('board', 'task.updated', { id, ...overrides });
  if (overrides.board !== undefined) event.task = { ...event.task, board_id: overrides.board.id, key: `${overrides.board.key}-1` };
  const signed = signBoard(event);
  if (!/^[\x20-\x7e]*$/.test(id)) delete signed.headers['X-Svc-Delivery'];
  return signed;
}

async function handledInTime(handled: ReadonlyArray<{ id: string }>, ids: readonly string[]): Promise<void> {
  await eventually(() => ids.every((id) => handled.some((h) => h.id === id)), 10_000, `deliveries ${ids.join(', ')} to be handled`);
}

describe('with the de-dup store and the inbox on one Redis, default prefixes and schemaPolicy skip', () => {
  // Ids that, as `svc-webhooks:` plus the id, named BullMQ's lists, hashes and counters of the board queue.
  const queueKeys = [
    'board:active',
    'board:wait',
    'board:meta',
    'board:id',
    'board:events',
    'board:marker',
    'board:delayed',
    'board:completed',
    'board:stalled-check',
  ];

  it.each(queueKeys)('handles a delivery with id %s, and every delivery after it', async (hostile) => {
    const { handled, url } = await boardOnOneRedis();
    expect((await deliver(url, boardEvent(hostile))).status).toBe(200);
    await handledInTime(handled, [hostile]);
    const after = Array.from({ length: 5 }, () => randomUUID());
    for (const id of after) expect((await deliver(url, boardEvent(id))).status).toBe(200);
    await handledInTime(handled, after);
    // Its repeat is a duplicate, as any id's.
    expect(await deliver(url, boardEvent(hostile))).toMatchObject({ status: 200, body: { duplicate: true } });
  });

  it("handles a delivery whose id names a later delivery's job, and that later delivery", async () => {
    const { handled, url } = await boardOnOneRedis();
    const victim = randomUUID();
    const hostile = `board:${jobIdOf(victim)}`;
    expect((await deliver(url, boardEvent(hostile))).status).toBe(200);
    expect((await deliver(url, boardEvent(victim))).status).toBe(200);
    await handledInTime(handled, [hostile, victim]);
  });

  it("handles a delivery whose id names a board's order key, and that board's ordered events after it, in order", async () => {
    const { handled, url } = await boardOnOneRedis({ ordered: true, gapWaitMs: 60_000 });
    const boardId = randomUUID();
    const onBoard = (sequence: number) => ({ sequence, board: { id: boardId, key: 'K', name: 'n' } });
    const hostile = `board:order:${boardId}:last`;
    expect((await deliver(url, boardEvent(randomUUID(), onBoard(1)))).status).toBe(200);
    await eventually(() => handled.length === 1, 10_000, 'the first event of the board');
    // Sent from another board (its own sequence), the id would have set the board's last sequence to a string.
    expect((await deliver(url, boardEvent(hostile, { sequence: 1, board: { id: randomUUID(), key: 'L', name: 'm' } }))).status).toBe(200);
    const later = [2, 3, 4].map((sequence) => ({ id: randomUUID(), sequence }));
    for (const e of later) expect((await deliver(url, boardEvent(e.id, onBoard(e.sequence)))).status).toBe(200);
    await handledInTime(handled, [hostile, ...later.map((e) => e.id)]);
    expect(handled.filter((h) => h.id !== hostile).map((h) => h.sequence)).toEqual([1, 2, 3, 4]);
  });

  it('handles a bot update with id bot:active, and every update after it', async () => {
    const handled: string[] = [];
    const store = redisStore({ url: redis.url });
    const bot = svcBotWebhook({
      secret: BOT_SECRET,
      logger: silentLogger,
      schemaPolicy: 'skip',
      store,
      inbox: { connection: redis.url, retryDelayMs: 50 },
    }).onAny((_data, ctx) => {
      handled.push(ctx.deliveryId);
    });
    const server = await serve(bot);
    const worker = bot.work({ stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(
      () => store.close(),
      () => bot.close(),
      () => server.close(),
      () => worker.close(),
    );
    const url = `${server.url}/webhooks/bot`;
    const ids = ['bot:active', randomUUID(), randomUUID()];
    for (const id of ids) expect((await deliver(url, signBot(fixture('bot', 'messageCreate', { id })))).status).toBe(200);
    await eventually(() => ids.every((id) => handled.includes(id)), 10_000, 'every update to be handled');
  });

  it('keeps every key it writes, for hostile ids and board ids, in its own family: the store, board order or a queue', async () => {
    const { handled, url } = await boardOnOneRedis({ ordered: true, gapWaitMs: 100 });
    const hostile = ['board:{x}:*', `${'é'.repeat(300)}:😀`, 'id:board:active', 'a'.repeat(600), '%3A', 'ω{}*?[]'];
    const boards = ['b:last', '{board}', 'order:x:lock', 'ü'];
    for (const [i, id] of hostile.entries()) {
      const board = { id: boards[i % boards.length]!, key: 'K', name: 'n' };
      expect((await deliver(url, boardEvent(id, { sequence: 1 + Math.floor(i / boards.length), board }))).status).toBe(200);
    }
    await handledInTime(handled, hostile);
    const keys = await client.keys('*');
    const family = (key: string) =>
      /^svc-webhooks:id:[A-Za-z0-9_.%-]+$/.test(key)
        ? 'store'
        : /^svc-webhooks:board:order:[A-Za-z0-9_.%-]+:(last|pending|lock|passed)$/.test(key)
          ? 'order'
          : key.startsWith('svc-webhooks:board:')
            ? 'queue'
            : 'other';
    expect(keys.filter((k) => family(k) === 'other')).toEqual([]);
    for (const key of keys.filter((k) => family(k) === 'store')) expect(await client.get(key)).toBe('done');
    expect(keys.filter((k) => family(k) === 'store')).toHaveLength(hostile.length);
    expect(new Set(keys.filter((k) => family(k) === 'order').map((k) => k.split(':')[3])).size).toBe(boards.length);
  });
});
