import { randomUUID } from 'node:crypto';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { memoryStore, redisStore, svcBoardWebhook, svcBotWebhook, type DeliveryRecord, type InboxWorker, type RedisStore } from '../../src';
import { Redis } from 'ioredis';
import { jobIdOf } from '../../src/inbox/inbox-job';
import { runCli } from '../cli/run-cli';
import { deliver, eventually, redisSuite, serve } from '../support/inbox';
import { memoryLogger, silentLogger } from '../support/apps';
import { RedisServer } from '../support/redis-server';
import { BOARD_SECRET, BOT_SECRET, fixture, signBoard, signBot } from '../support/sign';

const suite = redisSuite();
const cleanups = suite.cleanups;

/** A receiver and a worker of one board webhook in this process, on their own queue prefix. */
async function boardInbox(handler: (event: any, ctx: any) => unknown, inbox: Record<string, unknown> = {}, logger = silentLogger) {
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const store: RedisStore = redisStore({ url: suite.redis.url, prefix: `${prefix}-ids:` });
  const board = svcBoardWebhook({
    secret: BOARD_SECRET,
    logger,
    store,
    inbox: { connection: suite.redis.url, prefix, retryDelayMs: 50, ...inbox },
  }).onAny(handler);
  const server = await serve(board);
  cleanups.push(
    () => store.close(),
    () => board.close(),
    () => server.close(),
  );
  const workers: InboxWorker[] = [];
  const work = (options = {}) => {
    const worker = board.work({ stalledIntervalMs: 500, lockDurationMs: 1000, ...options });
    workers.push(worker);
    cleanups.push(() => worker.close());
    return worker;
  };
  return { board, url: `${server.url}/webhooks/board`, work, prefix };
}

describe('inbox mode', () => {
  it('answers 200 at once while a handler runs longer than the sender waits (11 s), and the handler completes', async () => {
    let finished = 0;
    const { url, work } = await boardInbox(async () => {
      await new Promise((r) => setTimeout(r, 11_000));
      finished++;
    });
    work();
    const answer = await deliver(url, signBoard(fixture('board', 'task.created')));
    expect(answer.status).toBe(200);
    expect(answer.ms).toBeLessThan(1000);
    expect(finished).toBe(0);
    await eventually(() => finished === 1, 15_000, 'the slow handler to finish');
  }, 30_000);

  it('runs a handler that fails 3 times then succeeds 4 times, keeping its side effect once, with ctx.attempt 1 to 4', async () => {
    const attempts: number[] = [];
    const effects = new Map<string, number>();
    const { url, work } = await boardInbox((event, ctx) => {
      attempts.push(ctx.attempt);
      if (ctx.attempt <= 3) throw new Error('transient');
      effects.set(event.id, (effects.get(event.id) ?? 0) + 1);
    });
    work();
    const event = fixture('board', 'task.created');
    expect((await deliver(url, signBoard(event))).status).toBe(200);
    await eventually(() => effects.size === 1, 10_000, 'the fourth attempt');
    // A repeat of the delivery after processing is a duplicate: nothing runs again.
    expect(await deliver(url, signBoard(event))).toMatchObject({ status: 200, body: { ok: true, duplicate: true } });
    await new Promise((r) => setTimeout(r, 300));
    expect(attempts).toEqual([1, 2, 3, 4]);
    expect([...effects.values()]).toEqual([1]);
  });

  it('keeps a delivery that fails for the whole retry window as a dead letter: listed, shown, retried by the CLI, then handled', async () => {
    let failing = true;
    const handled: string[] = [];
    const records: DeliveryRecord[] = [];
    const log = memoryLogger();
    const { board, url, work, prefix } = await boardInbox(
      (event) => {
        if (failing) throw new Error('upstream is down');
        handled.push(event.id);
      },
      { retryForMs: 200, retryDelayMs: 50 },
      log.logger,
    );
    board.onDelivery((r) => records.push(r));
    work();
    const event = fixture('board', 'task.created');
    const signed = signBoard(event);
    expect((await deliver(url, signed)).status).toBe(200);
    await eventually(() => records.some((r) => r.queue === 'dead'), 10_000, 'the dead letter');
    expect(records.filter((r) => r.attempt === undefined).map((r) => [r.queue, r.outcome])).toEqual([['enqueued', 'enqueued']]);
    expect(records.filter((r) => r.attempt !== undefined).map((r) => [r.attempt, r.queue])).toEqual([
      [1, 'retried'],
      [2, 'retried'],
      [3, 'retried'],
      [4, 'dead'],
    ]);
    expect(log.lines.filter((l) => l.level === 50 && l.deliveryId === event.id)).toHaveLength(1);

    const cli = (...args: string[]) => runCli(['inbox', ...args, '--prefix', prefix], { env: { REDIS_URL: suite.redis.url } });
    const listed = await cli('list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(event.id);
    expect(listed.stdout).toContain('4 attempts');
    const shown = await cli('show', event.id, '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({
      deliveryId: event.id,
      webhook: 'board',
      kind: 'task.created',
      attempts: 4,
      lastError: 'upstream is down',
      body: signed.body,
    });
    expect(shown.stdout).not.toContain('v1=');
    expect(JSON.parse(shown.stdout).headers).not.toHaveProperty('x-svc-signature');

    // As if its workers had disappeared mid-run twice: BullMQ counts stalls in the job hash, across retries.
    const redis = new Redis(suite.redis.url);
    cleanups.push(() => redis.quit());
    const jobKey = `${prefix}:board:${jobIdOf(event.id)}`;
    await redis.hset(jobKey, 'stc', 2);
    failing = false;
    const retried = await cli('retry', event.id);
    expect(retried.code).toBe(0);
    await eventually(() => handled.length === 1, 10_000, 'the retried dead letter to be handled');
    expect(handled).toEqual([event.id]);
    expect(await redis.hget(jobKey, 'stc')).toBeNull(); // a fresh window for stalls too
    expect((await cli('list')).stdout).toBe('no dead letters\n');
    expect(records.at(-1)).toMatchObject({ queue: 'processed', attempt: 1, deliveryId: event.id });
  });

  it('drops a dead letter and retries all of them with --all', async () => {
    let failing = true;
    const handled: string[] = [];
    const { url, work, prefix } = await boardInbox(
      (event) => {
        // A message with a terminal escape and a bidirectional override: the CLI must not pass them on.
        if (failing) throw new Error('down \u001b[2J\u202e');
        handled.push(event.id);
      },
      { retryForMs: 0 },
    );
    work();
    const events = [1, 2, 3].map(() => fixture('board', 'task.created'));
    for (const e of events) expect((await deliver(url, signBoard(e))).status).toBe(200);
    const cli = (...args: string[]) => runCli(['inbox', ...args, '--prefix', prefix, '--redis-url', suite.redis.url]);
    await eventually(async () => JSON.parse((await cli('list', '--json')).stdout).length === 3, 10_000, 'three dead letters');
    const listed = await cli('list');
    expect(listed.stdout).toContain('down ?[2J?');
    // oxlint-disable-next-line no-control-regex -- control characters are what the output must not hold
    expect(listed.stdout).not.toMatch(/[\u001b\u202e]/);
    expect((await cli('drop', events[0]!.id)).code).toBe(0);
    expect(await cli('drop', events[0]!.id)).toMatchObject({ code: 1 });
    failing = false;
    expect((await cli('retry', '--all')).stdout).toBe('2 dead letters put back in the inbox\n');
    await eventually(() => handled.length === 2, 10_000, 'the two retried dead letters');
    expect(handled.sort()).toEqual([events[1]!.id, events[2]!.id].sort());
  });

  it('says clearly, and fast, when Redis cannot be reached, without echoing its password', async () => {
    const started = Date.now();
    const result = await runCli(['inbox', 'list', '--redis-url', 'redis://:hunter2@127.0.0.1:1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    expect(result.stderr).not.toContain('hunter2');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('refuses the delivery with 503 inbox_unavailable, enqueueing nothing, while the inbox Redis is down; the retry is taken', async () => {
    const handled: string[] = [];
    const down = await RedisServer.start({ appendOnly: false });
    const store = redisStore({ url: suite.redis.url, prefix: `down${randomUUID().slice(0, 6)}:` });
    const board = svcBoardWebhook({
      secret: BOARD_SECRET,
      logger: silentLogger,
      store,
      inbox: { connection: down.url, enqueueTimeoutMs: 500 },
    }).onAny((e: any) => void handled.push(e.id));
    const server = await serve(board);
    cleanups.push(
      () => down.close(),
      () => store.close(),
      () => board.close(),
      () => server.close(),
    );
    const url = `${server.url}/webhooks/board`;
    await down.stop();
    const event = fixture('board', 'task.created');
    const refused = await deliver(url, signBoard(event));
    expect(refused).toMatchObject({ status: 503, body: { code: 'inbox_unavailable' } });
    expect(refused.ms).toBeLessThan(3000);
    await down.resume();
    const worker = board.work({ stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(() => worker.close());
    await eventually(async () => (await deliver(url, signBoard(event))).status === 200, 10_000, 'the retry to be taken');
    await eventually(() => handled.length === 1, 10_000, 'the handler');
    expect(handled).toEqual([event.id]);
  });

  it('takes deliveries again when Redis dropped the connection while BullMQ was preparing it (its version check), without a restart', async () => {
    const handled: string[] = [];
    // The receiver's first connection to the inbox Redis closes when the version check (its second INFO) is sent.
    const proxy = await dropOnSecondInfo(suite.redis.port);
    const prefix = `p${randomUUID().slice(0, 8)}`;
    const store = redisStore({ url: suite.redis.url, prefix: `${prefix}-ids:` });
    const board = svcBoardWebhook({
      secret: BOARD_SECRET,
      logger: silentLogger,
      store,
      inbox: { connection: proxy.url, prefix, enqueueTimeoutMs: 1000 },
    }).onAny((e: any) => void handled.push(e.id));
    const server = await serve(board);
    cleanups.push(
      () => proxy.close(),
      () => store.close(),
      () => board.close(),
      () => server.close(),
    );
    const url = `${server.url}/webhooks/board`;
    const event = fixture('board', 'task.created');
    expect(await deliver(url, signBoard(event))).toMatchObject({ status: 503, body: { code: 'inbox_unavailable' } });
    expect(proxy.dropped()).toBe(1);
    await eventually(async () => (await deliver(url, signBoard(event))).status === 200, 5000, 'the retry to be taken');
    const worker = board.work({ stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(() => worker.close());
    await eventually(() => handled.length === 1, 10_000, 'the handler');
    expect(handled).toEqual([event.id]);
  });

  it('runs bot updates in a worker with the same on/command/onAny API: ctx.attempt, ctx.receivedAt, no ctx.req', async () => {
    const prefix = `b${randomUUID().slice(0, 8)}`;
    const store = redisStore({ url: suite.redis.url, prefix: `${prefix}-ids:` });
    const calls: Array<[string, number, number, boolean]> = [];
    const bot = svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger, store, inbox: { connection: suite.redis.url, prefix } })
      .command('deploy', (_data, ctx) => void calls.push(['command', ctx.attempt, ctx.receivedAt, ctx.req === undefined]))
      .on('messageCreate', (_data, ctx) => void calls.push(['on', ctx.attempt, ctx.receivedAt, ctx.req === undefined]))
      .onAny((_data, ctx) => void calls.push(['any', ctx.attempt, ctx.receivedAt, ctx.req === undefined]));
    const server = await serve(bot);
    cleanups.push(
      () => store.close(),
      () => bot.close(),
      () => server.close(),
    );
    const before = Date.now();
    const answer = await deliver(`${server.url}/webhooks/bot`, signBot(fixture('bot', 'messageCreate.command')));
    expect(answer.status).toBe(200);
    expect(calls).toEqual([]);
    const worker = bot.work({ stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(() => worker.close());
    await eventually(() => calls.length === 3, 10_000, 'the three handlers');
    expect(calls.map((c) => c[0]).sort()).toEqual(['any', 'command', 'on']);
    for (const [, attempt, receivedAt, noReq] of calls) {
      expect(attempt).toBe(1);
      expect(noReq).toBe(true);
      expect(receivedAt).toBeGreaterThanOrEqual(before);
      expect(receivedAt).toBeLessThanOrEqual(before + answer.ms + 5);
    }
  });

  it('logs one line per delivery when it is received and one per processing attempt', async () => {
    const log = memoryLogger();
    let runs = 0;
    const { url, work } = await boardInbox(
      () => {
        if (++runs === 1) throw new Error('once');
      },
      {},
      log.logger,
    );
    work();
    const event = fixture('board', 'task.created');
    await deliver(url, signBoard(event));
    await deliver(url, signBoard(event));
    await eventually(() => log.lines.some((l) => l.msg === 'delivery processed'), 10_000, 'the second attempt');
    const mine = log.lines.filter((l) => l.deliveryId === event.id);
    // The receive lines and the attempt lines interleave as the worker and the second request race.
    const received = mine.filter((l) => l.msg === 'delivery received').map((l) => l.queue);
    const attempts = mine.filter((l) => l.msg !== 'delivery received').map((l) => [l.attempt, l.queue, l.msg]);
    expect(received).toEqual(['enqueued', 'duplicate']);
    expect(attempts).toEqual([
      [1, 'retried', 'delivery attempt failed; it will be retried'],
      [2, 'processed', 'delivery processed'],
    ]);
  });

  it('close() on a worker lets the running handler finish (telling it through ctx.signal); the delivery is not run again', async () => {
    let started = 0;
    let finished = 0;
    let aborted: boolean | undefined;
    const { url, work } = await boardInbox(async (_event, ctx) => {
      started++;
      await new Promise((r) => setTimeout(r, 800));
      aborted = ctx.signal.aborted;
      finished++;
    });
    const first = work();
    await deliver(url, signBoard(fixture('board', 'task.created')));
    await eventually(() => started === 1, 10_000, 'the handler to start');
    await first.close();
    expect([started, finished, aborted]).toEqual([1, 1, true]);
    work();
    await new Promise((r) => setTimeout(r, 1500));
    expect([started, finished]).toEqual([1, 1]);
  });

  it('refuses work() without the inbox option, and bad inbox options at setup', () => {
    expect(() => svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger }).work()).toThrow(TypeError);
    expect(() => svcBoardWebhook({ secret: BOARD_SECRET, inbox: { connection: 'http://x' } })).toThrow(TypeError);
    expect(() => svcBoardWebhook({ secret: BOARD_SECRET, inbox: { connection: suite.redis.url, retryForMs: -1 } })).toThrow(RangeError);
    expect(() => svcBoardWebhook({ secret: BOARD_SECRET, inbox: { connection: suite.redis.url, ordered: 'yes' as never } })).toThrow(TypeError);
    expect(() => svcBoardWebhook({ secret: BOARD_SECRET, inbox: { connection: suite.redis.url, colour: 1 } as never })).toThrow(TypeError);
  });

  it("answers once the job is in the queue, without waiting for the store's record; a repeat before the record is 409, after it a duplicate", async () => {
    // A store whose commits take 1.5 s: the answer must not wait for them, and close() must.
    const memory = memoryStore({ logger: silentLogger });
    let committed = 0;
    const slow = {
      claim: memory.claim.bind(memory),
      release: memory.release.bind(memory),
      commit: async (id: string, token: string) => {
        await new Promise((r) => setTimeout(r, 1500));
        await memory.commit(id, token);
        committed++;
      },
    };
    const prefix = `s${randomUUID().slice(0, 8)}`;
    const board = svcBoardWebhook({
      secret: BOARD_SECRET,
      logger: silentLogger,
      store: slow,
      inbox: { connection: suite.redis.url, prefix },
    }).onAny(() => undefined);
    const server = await serve(board);
    cleanups.push(() => server.close());
    const url = `${server.url}/webhooks/board`;
    const signed = signBoard(fixture('board', 'task.created'));
    const first = await deliver(url, signed);
    expect(first).toMatchObject({ status: 200, body: { ok: true } });
    expect(first.ms).toBeLessThan(1000);
    expect(committed).toBe(0);
    expect((await deliver(url, signed)).status).toBe(409);
    await eventually(() => committed === 1, 5000, 'the record');
    expect(await deliver(url, signed)).toMatchObject({ status: 200, body: { ok: true, duplicate: true } });
    // close() waits for a record still on its way.
    expect((await deliver(url, signBoard(fixture('board', 'task.created')))).status).toBe(200);
    await board.close();
    expect(committed).toBe(2);
  });

  it('enqueues a delivery once even when the de-dup store lost it (a receiver crashed before recording it): the job id holds', async () => {
    // An id outside the schema (schemaPolicy skip) with the characters BullMQ refuses in job ids.
    // A store whose commits always fail: the claim lapses after its lease, as after a crash between enqueue and commit.
    const memory = memoryStore({ logger: silentLogger });
    const forgetful = {
      claim: memory.claim.bind(memory),
      release: memory.release.bind(memory),
      commit: () => Promise.reject(new Error('lost')),
    };
    const prefix = `c${randomUUID().slice(0, 8)}`;
    let runs = 0;
    const board = svcBoardWebhook({
      secret: BOARD_SECRET,
      logger: silentLogger,
      store: forgetful,
      timeoutMs: 10,
      leaseMs: 50,
      schemaPolicy: 'skip',
      inbox: { connection: suite.redis.url, prefix },
    }).onAny(() => void runs++);
    const server = await serve(board);
    const worker = board.work({ stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(
      () => board.close(),
      () => server.close(),
      () => worker.close(),
    );
    const event = fixture('board', 'task.created', { id: 'delivery:with:colons' });
    const url = `${server.url}/webhooks/board`;
    expect((await deliver(url, signBoard(event))).body).toEqual({ ok: true });
    await eventually(() => runs === 1, 10_000, 'the handler');
    await new Promise((r) => setTimeout(r, 300)); // the lease lapsed: the store no longer knows the delivery
    expect((await deliver(url, signBoard(event))).body).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, 500));
    expect(runs).toBe(1);
  });

  it('abandons an attempt whose handler never settles after abandonAfter (aborting its signal) and retries the delivery', async () => {
    const prefix = `h${randomUUID().slice(0, 8)}`;
    const signals: AbortSignal[] = [];
    const handled: number[] = [];
    const board = svcBoardWebhook({
      secret: BOARD_SECRET,
      logger: silentLogger,
      timeoutMs: 10,
      abandonAfterMs: 300,
      inbox: { connection: suite.redis.url, prefix, retryDelayMs: 50 },
    }).onAny((_event, ctx) => {
      signals.push(ctx.signal);
      if (ctx.attempt === 1) return new Promise(() => undefined); // never settles
      handled.push(ctx.attempt);
      return undefined;
    });
    const server = await serve(board);
    const worker = board.work({ stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(
      () => board.close(),
      () => server.close(),
      () => worker.close(),
    );
    expect((await deliver(`${server.url}/webhooks/board`, signBoard(fixture('board', 'task.created')))).status).toBe(200);
    await eventually(() => handled.length === 1, 10_000, 'the retry after the abandoned attempt');
    expect(handled).toEqual([2]);
    expect(signals[0]!.aborted).toBe(true);
  });

  it('survives a handler that throws a hostile value (a Proxy whose every read throws): the attempt is retried and logged safely', async () => {
    const log = memoryLogger();
    const attempts: number[] = [];
    const { url, work } = await boardInbox(
      (_event, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) {
          throw new Proxy(
            {},
            {
              get() {
                throw new Error('gotcha');
              },
            },
          );
        }
      },
      {},
      log.logger,
    );
    work();
    const event = fixture('board', 'task.created');
    expect((await deliver(url, signBoard(event))).status).toBe(200);
    await eventually(() => log.lines.some((l) => l.deliveryId === event.id && l.queue === 'processed'), 10_000, 'the second attempt');
    expect(attempts).toEqual([1, 2]);
    const failed = log.lines.find((l) => l.deliveryId === event.id && l.queue === 'retried');
    expect(failed).toMatchObject({ level: 40, attempt: 1 });
    expect(typeof failed!.err.message).toBe('string');
  });

  it("with a secret resolver, a worker in another webhook instance drops the verifying bot's secret from the handlers' logger and from its own lines", async () => {
    const ONE = '11111111-1111-4111-8111-111111111111';
    const BOT_ONE = 'bot-one-secret-for-inbox-0123456789';
    const prefix = `r${randomUUID().slice(0, 8)}`;
    const log = memoryLogger();
    const options = () => ({
      secret: ({ botId }: { botId: string }) => ({ [ONE]: BOT_ONE })[botId],
      path: '/webhooks/bots/:botId',
      logger: log.logger,
      inbox: { connection: suite.redis.url, prefix },
    });
    const receiving = svcBotWebhook(options());
    const seen: string[] = [];
    // The worker's own instance has looked nothing up yet, as in a separate process.
    const working = svcBotWebhook(options()).onAny((_data, ctx) => {
      // Values go in fields: message strings are not scanned (see docs/observability.md).
      ctx.log.info({ careless: BOT_ONE, note: `the secret is ${BOT_ONE}` }, 'careless');
      seen.push(ctx.deliveryId);
      // The worker's own line about the failed attempt carries this error.
      if (ctx.attempt === 1) throw new Error(`re-signing failed with ${BOT_ONE}`);
    });
    const server = await serve(receiving);
    const worker = working.work({ stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(
      () => receiving.close(),
      () => server.close(),
      () => worker.close(),
    );
    const update = fixture('bot', 'messageCreate', { botUserId: ONE });
    expect((await deliver(`${server.url}/webhooks/bots/${ONE}`, signBot(update, { secret: BOT_ONE }))).status).toBe(200);
    await eventually(() => seen.length === 2, 10_000, 'the handler, twice');
    expect(log.lines.some((l) => l.msg === 'careless')).toBe(true);
    expect(log.lines.some((l) => l.msg === 'delivery attempt failed; it will be retried')).toBe(true);
    expect(log.text()).not.toContain(BOT_ONE);
  });
});

/**
 * A loopback TCP proxy to redis-server that closes its first connection when the client sends its
 * second INFO (ioredis's ready check is the first, BullMQ's version check the second); later
 * connections pass through.
 */
async function dropOnSecondInfo(port: number): Promise<{ url: string; dropped(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  let dropped = 0;
  const server = createNetServer((client) => {
    const first = ++connections === 1;
    const upstream = connect(port, '127.0.0.1');
    let infos = 0;
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (chunk) => {
      infos += (chunk.toString('latin1').match(/\$4\r\ninfo\r\n/gi) ?? []).length;
      if (first && infos >= 2) {
        dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropped: () => dropped,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
