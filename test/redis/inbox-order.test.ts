import { randomUUID } from 'node:crypto';
import { redisStore, svcBoardWebhook, type BoardWebhookOptions, type InboxWorker } from '../../src';
import { memoryLogger, silentLogger } from '../support/apps';
import { deliver, eventually, redisSuite, serve } from '../support/inbox';
import { BOARD_SECRET, fixture, signBoard, onBoard } from '../support/sign';

const suite = redisSuite();
const cleanups = suite.cleanups;

interface Seen {
  readonly board: string;
  readonly sequence: number;
  readonly type: string;
  readonly gap: unknown;
  readonly at: number;
}

/** A receiver with board order and `workers` workers in this process; the handler records what it saw and any overlap per board. */
async function orderedInbox(inbox: Record<string, unknown>, workers: number, handlerMs = 0, logger: BoardWebhookOptions['logger'] = silentLogger) {
  const prefix = `o${randomUUID().slice(0, 8)}`;
  const store = redisStore({ url: suite.redis.url, prefix: `${prefix}-ids:` });
  const seen: Seen[] = [];
  const overlaps: string[] = [];
  const running = new Set<string>();
  const board = svcBoardWebhook({ secret: BOARD_SECRET, logger, store, inbox: { connection: suite.redis.url, prefix, retryDelayMs: 50, ...inbox } }).onAny(
    async (event: any, ctx) => {
      const id = event.board.id as string;
      if (event.type !== 'ping') {
        if (running.has(id)) overlaps.push(`${id}#${event.sequence}`);
        running.add(id);
      }
      if (handlerMs > 0) await new Promise((r) => setTimeout(r, handlerMs));
      seen.push({ board: id, sequence: event.sequence, type: event.type, gap: ctx.gap, at: Date.now() });
      running.delete(id);
    },
  );
  const server = await serve(board);
  cleanups.push(
    () => store.close(),
    () => board.close(),
    () => server.close(),
  );
  for (let i = 0; i < workers; i++) {
    const worker: InboxWorker = board.work({ concurrency: 8, stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(() => worker.close());
  }
  /** Starts one more worker later (a worker that comes after a backlog built up). */
  const work = (concurrency = 8) => {
    const worker: InboxWorker = board.work({ concurrency, stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(() => worker.close());
  };
  return { url: `${server.url}/webhooks/board`, seen, overlaps, work };
}

function boardEvent(boardId: string, sequence: number, type = 'task.updated') {
  const base = fixture('board', type);
  return onBoard({ ...base, sequence }, boardId);
}

function shuffle<T>(items: T[], seed: number): T[] {
  let s = seed;
  const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

const sequencesOf = (seen: readonly Seen[], board: string) => seen.filter((s) => s.board === board).map((s) => s.sequence);

describe('inbox board order', () => {
  it('hands the shuffled events of 20 boards to the handlers in sequence order per board, one at a time per board', async () => {
    const { url, seen, overlaps } = await orderedInbox({ ordered: true, gapWaitMs: 60_000 }, 2, 5);
    const boards = Array.from({ length: 20 }, () => randomUUID());
    const events = shuffle(
      boards.flatMap((b) => Array.from({ length: 8 }, (_, i) => boardEvent(b, i + 1))),
      7,
    );
    // Several at a time, as svc's deliveries overlap.
    for (let i = 0; i < events.length; i += 10) {
      const answers = await Promise.all(events.slice(i, i + 10).map((e) => deliver(url, signBoard(e))));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    }
    await eventually(() => seen.length === events.length, 30_000, 'every event to be handled');
    for (const b of boards) expect(sequencesOf(seen, b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(overlaps).toEqual([]);
    expect(seen.every((s) => s.gap === undefined)).toBe(true);
    // Boards run in parallel: the handling of different boards interleaves.
    expect(new Set(seen.slice(0, 20).map((s) => s.board)).size).toBeGreaterThan(1);
  }, 60_000);

  it('waits for a missing sequence number that arrives within gapWaitMs, then hands over all in order without a gap', async () => {
    const { url, seen } = await orderedInbox({ ordered: true, gapWaitMs: 20_000 }, 1);
    const b = randomUUID();
    for (const n of [1, 3, 4]) await deliver(url, signBoard(boardEvent(b, n)));
    await eventually(() => seen.length === 1, 5000, 'the first event');
    await new Promise((r) => setTimeout(r, 400));
    expect(sequencesOf(seen, b)).toEqual([1]);
    await deliver(url, signBoard(boardEvent(b, 2)));
    await eventually(() => seen.length === 4, 5000, 'the rest, once 2 arrived');
    expect(sequencesOf(seen, b)).toEqual([1, 2, 3, 4]);
    expect(seen.map((s) => s.gap)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('waits gapWaitMs for a sequence number that never comes, then reports it in ctx.gap and goes on; a late arrival is still handled', async () => {
    const gapWaitMs = 1500;
    const { url, seen } = await orderedInbox({ ordered: true, gapWaitMs }, 1);
    const b = randomUUID();
    const sent = Date.now();
    for (const n of [1, 2, 5, 6]) await deliver(url, signBoard(boardEvent(b, n)));
    await eventually(() => seen.length === 4, 10_000, 'the events after the gap');
    expect(sequencesOf(seen, b)).toEqual([1, 2, 5, 6]);
    expect(seen.map((s) => s.gap)).toEqual([undefined, undefined, { from: 3, to: 4 }, undefined]);
    expect(seen[2]!.at - sent).toBeGreaterThanOrEqual(gapWaitMs - 50);
    await deliver(url, signBoard(boardEvent(b, 3)));
    await eventually(() => seen.length === 5, 5000, 'the late event');
    expect(sequencesOf(seen, b)).toEqual([1, 2, 5, 6, 3]);
  });

  it("logs one line when an ordered event starts waiting for a gap: the board, the missing numbers, how long (the CLI's examples start at 211)", async () => {
    const log = memoryLogger();
    const gapWaitMs = 1500;
    const { url, seen } = await orderedInbox({ ordered: true, gapWaitMs }, 1, 0, log.logger);
    const b = randomUUID();
    await deliver(url, signBoard(onBoard(fixture('board', 'task.archived'), b)));
    await eventually(() => seen.length === 1, 10_000, 'the event after the gap');
    expect(seen[0]!.gap).toEqual({ from: 1, to: 210 });
    const waits = log.lines.filter((l) => l.missing !== undefined);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ level: 30, board: b, sequence: 211, missing: { from: 1, to: 210 } });
    expect(waits[0]!.waitMs).toBeGreaterThan(gapWaitMs - 200);
    expect(waits[0]!.waitMs).toBeLessThanOrEqual(gapWaitMs);
  });

  it('orders only the kinds named: other kinds and ping are handed over at once, and ordered events do not wait for their sequence numbers', async () => {
    const { url, seen } = await orderedInbox({ ordered: ['task.updated'], gapWaitMs: 30_000 }, 1);
    const b = randomUUID();
    const ping = onBoard(fixture('board', 'ping'), b);
    await deliver(url, signBoard(boardEvent(b, 3)));
    await deliver(url, signBoard(boardEvent(b, 2, 'task.comment.created')));
    await deliver(url, signBoard(ping));
    await eventually(() => seen.length === 2, 5000, 'the comment and the ping');
    expect(seen.map((s) => s.type).sort()).toEqual(['ping', 'task.comment.created']);
    await deliver(url, signBoard(boardEvent(b, 1)));
    await eventually(() => seen.length === 4, 5000, 'the ordered events');
    expect(seen.filter((s) => s.type === 'task.updated').map((s) => s.sequence)).toEqual([1, 3]);
    expect(seen.every((s) => s.gap === undefined)).toBe(true);
  });

  it('counts the wait for a missing predecessor from when a worker first takes the event up: time in a backlog is not waiting', async () => {
    const gapWaitMs = 1000;
    const { url, seen, work } = await orderedInbox({ ordered: true, gapWaitMs }, 0);
    const b = randomUUID();
    await deliver(url, signBoard(boardEvent(b, 2)));
    await new Promise((r) => setTimeout(r, gapWaitMs + 500));
    await deliver(url, signBoard(boardEvent(b, 1))); // arrived within gapWaitMs of 2, but queued after it
    work(1); // takes 2 first, 1.5 s after it arrived
    await eventually(() => seen.length === 2, 10_000, 'both events');
    expect(sequencesOf(seen, b)).toEqual([1, 2]);
    expect(seen.map((s) => s.gap)).toEqual([undefined, undefined]);
  });

  it('does not cut short the retry delay of a failing ordered event when other events of its board are taken up', async () => {
    const prefix = `d${randomUUID().slice(0, 8)}`;
    const store = redisStore({ url: suite.redis.url, prefix: `${prefix}-ids:` });
    const attempts: number[] = [];
    const others: number[] = [];
    const retryDelayMs = 1500;
    const board = svcBoardWebhook({
      secret: BOARD_SECRET,
      logger: silentLogger,
      store,
      inbox: { connection: suite.redis.url, prefix, retryDelayMs, ordered: ['task.updated'], gapWaitMs: 30_000 },
    }).onAny((event: any) => {
      if (event.type !== 'task.updated') return void others.push(event.sequence);
      attempts.push(Date.now());
      if (attempts.length === 1) throw new Error('transient');
    });
    const server = await serve(board);
    const worker = board.work({ concurrency: 4, stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(
      () => store.close(),
      () => board.close(),
      () => server.close(),
      () => worker.close(),
    );
    const url = `${server.url}/webhooks/board`;
    const b = randomUUID();
    await deliver(url, signBoard(boardEvent(b, 1)));
    await eventually(() => attempts.length === 1, 5000, 'the first attempt');
    // Unordered events of the same board, handled while the ordered one waits for its retry.
    for (const n of [2, 3, 4]) await deliver(url, signBoard(boardEvent(b, n, 'task.comment.created')));
    await eventually(() => others.length === 3, 5000, 'the unordered events');
    await eventually(() => attempts.length === 2, 10_000, 'the retry');
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(retryDelayMs - 100);
  });

  it('with a list of types, ordered events wait neither for the handlers nor for the retries of an unordered event before them', async () => {
    const prefix = `u${randomUUID().slice(0, 8)}`;
    const store = redisStore({ url: suite.redis.url, prefix: `${prefix}-ids:` });
    const seen: Array<{ type: string; sequence: number; gap: unknown }> = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let failed = false;
    const board = svcBoardWebhook({
      secret: BOARD_SECRET,
      logger: silentLogger,
      store,
      inbox: { connection: suite.redis.url, prefix, retryDelayMs: 60_000, ordered: ['task.updated'], gapWaitMs: 30_000 },
    }).onAny(async (event: any, ctx) => {
      if (event.sequence === 1) await gate; // an unordered event whose handler is still running
      if (event.sequence === 2 && !failed) {
        failed = true; // an unordered event that failed and waits a minute for its retry
        throw new Error('transient');
      }
      seen.push({ type: event.type, sequence: event.sequence, gap: ctx.gap });
    });
    const server = await serve(board);
    const worker = board.work({ concurrency: 4, stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(
      () => store.close(),
      () => board.close(),
      () => server.close(),
      () => worker.close(),
      async () => open(),
    );
    const url = `${server.url}/webhooks/board`;
    const b = randomUUID();
    await deliver(url, signBoard(boardEvent(b, 1, 'task.comment.created')));
    await deliver(url, signBoard(boardEvent(b, 2, 'task.comment.created')));
    await eventually(() => failed, 5000, 'the failed attempt');
    await deliver(url, signBoard(boardEvent(b, 3)));
    await eventually(() => seen.length === 1, 5000, 'the ordered event');
    expect(seen).toEqual([{ type: 'task.updated', sequence: 3, gap: undefined }]);
    open();
    await eventually(() => seen.length === 2, 5000, 'the first unordered event');
  });

  it('holds a board while its event is retried: the next event waits, other boards go on', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}`;
    const store = redisStore({ url: suite.redis.url, prefix: `${prefix}-ids:` });
    const order: string[] = [];
    let failures = 2;
    // Board ids are UUIDs (a task's board_id must be one); the order is recorded by these names.
    const names: Record<string, string> = { [randomUUID()]: 'A', [randomUUID()]: 'B' };
    const [A, B] = Object.keys(names) as [string, string];
    const board = svcBoardWebhook({
      secret: BOARD_SECRET,
      logger: silentLogger,
      store,
      inbox: { connection: suite.redis.url, prefix, retryDelayMs: 200, ordered: true, gapWaitMs: 30_000 },
    }).onAny((event: any) => {
      if (event.board.id === A && event.sequence === 1 && failures-- > 0) throw new Error('transient');
      order.push(`${names[event.board.id]}${event.sequence}`);
    });
    const server = await serve(board);
    const worker = board.work({ stalledIntervalMs: 500, lockDurationMs: 1000 });
    cleanups.push(
      () => store.close(),
      () => board.close(),
      () => server.close(),
      () => worker.close(),
    );
    const url = `${server.url}/webhooks/board`;
    for (const [b, n] of [
      [A, 1],
      [A, 2],
      [B, 1],
      [B, 2],
    ] as const)
      await deliver(url, signBoard(boardEvent(b, n)));
    await eventually(() => order.length === 4, 10_000, 'all four events');
    expect(order.filter((o) => o.startsWith('A'))).toEqual(['A1', 'A2']);
    expect(order.indexOf('B2')).toBeLessThan(order.indexOf('A1'));
  });
});
