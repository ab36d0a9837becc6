import { BOARD_PLACE_KEPT_MS, BoardOrder, logGapWait, type ScriptRunner } from '../../../src/inbox/board-order';
import type { WebhookLogger } from '../../../src/internal/logging/logger';
import { scriptedClient } from '../../support/fake-ioredis';

/**
 * Board order's own logic against a scripted client: which script each step sends, with which keys
 * and arguments, and how it reads the script's answer. What the scripts do in Redis (the order, the
 * gaps, stale locks) is tested against a real redis-server in test/redis/board-order.test.ts.
 */
type Call = { script: string; numKeys: number; args: Array<string | number> };

/** A scripted client whose every script answers `answer`; its calls read as script, keys count and arguments. */
function fakeRedis(answer: unknown = null) {
  const calls: Call[] = [];
  const { client } = scriptedClient(([script, numKeys, ...args]) => {
    calls.push({ script: script as string, numKeys: numKeys as number, args });
    return Promise.resolve(answer);
  });
  const redis: ScriptRunner = client;
  return { redis, calls };
}

const PREFIX = 'svc-webhooks:board:';
const keys = (board: string) => ({
  last: `${PREFIX}order:${board}:last`,
  pending: `${PREFIX}order:${board}:pending`,
  lock: `${PREFIX}order:${board}:lock`,
  passed: `${PREFIX}order:${board}:passed`,
});

describe('board order: taking a board for an event (start)', () => {
  it("sends one script with the board's last, pending, lock and passed keys, then the job, its sequence, the time, gapWaitMs, the TTL, the job key prefix, the probe flag and how long the last sequence is kept", async () => {
    const { redis, calls } = fakeRedis([1, -1]);
    await new BoardOrder(redis, PREFIX, 120_000, 90_000).start('b1', 'd-x', 7, 2500);
    const k = keys('b1');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.numKeys).toBe(4);
    expect(calls[0]!.args).toEqual([k.last, k.pending, k.lock, k.passed, 'd-x', 7, 2500, 120_000, 90_000, PREFIX, '0', BOARD_PLACE_KEPT_MS]);
  });

  it("keeps the last sequence at least as long as the rest of the board's state", async () => {
    const { redis, calls } = fakeRedis([1, -1]);
    await new BoardOrder(redis, PREFIX, 0, BOARD_PLACE_KEPT_MS + 5).start('b1', 'd-x', 7, 0);
    expect(calls[0]!.args[11]).toBe(BOARD_PLACE_KEPT_MS + 5);
  });

  it('takes the board unless asked only to probe, which sends the probe flag', async () => {
    const { redis, calls } = fakeRedis([1, -1]);
    const order = new BoardOrder(redis, PREFIX, 0, 1);
    await order.start('b1', 'd-x', 1, 0);
    await order.start('b1', 'd-x', 1, 0);
    await order.probe('b1', 'd-x', 1, 0);
    expect(calls.map((c) => c.args[10])).toEqual(['0', '0', '1']);
  });

  it("keeps each board in keys of its own under the queue's prefix", async () => {
    const { redis, calls } = fakeRedis([1, -1]);
    const order = new BoardOrder(redis, 'app:bot:', 0, 1);
    await order.start('one', 'd-a', 1, 0);
    await order.start('two', 'd-b', 1, 0);
    expect(calls.map((c) => c.args.slice(0, 4))).toEqual([
      ['app:bot:order:one:last', 'app:bot:order:one:pending', 'app:bot:order:one:lock', 'app:bot:order:one:passed'],
      ['app:bot:order:two:last', 'app:bot:order:two:pending', 'app:bot:order:two:lock', 'app:bot:order:two:passed'],
    ]);
  });

  it.each([
    ['{1, -1}: its turn, no gap', [1, -1], { run: true }],
    ['{1, n}: its turn, after the missing sequences from n up to its own', [1, 4], { run: true, gap: { from: 4, to: 8 } }],
    ['{1, 0}: its turn, with a gap from 0', [1, 0], { run: true, gap: { from: 0, to: 8 } }],
    ['{0, 0}: not its turn, until woken', [0, 0], { run: false, waitMs: 0 }],
    ['{0, ms}: not its turn yet, for ms', [0, 1500], { run: false, waitMs: 1500 }],
    ['{2, 0}: handled already', [2, 0], { run: false, handled: true }],
    ['{2, -1}: handled already, whatever the value', [2, -1], { run: false, handled: true }],
  ])('reads the answer %s', async (_what, answer, turn) => {
    const { redis } = fakeRedis(answer);
    expect(await new BoardOrder(redis, PREFIX, 0, 1).start('b1', 'd-x', 9, 0)).toStrictEqual(turn);
  });

  it('sends a script that first answers handled for a job marked handled, takes its place, and skips holders and pending events whose jobs are gone, dead or completed', async () => {
    const { redis, calls } = fakeRedis([1, -1]);
    await new BoardOrder(redis, PREFIX, 0, 1).start('b1', 'd-x', 1, 0);
    const script = calls[0]!.script;
    expect(script).toMatch(/local function gone\(other\)/);
    expect(script).toContain('local job = jobs .. id');
    expect(script).toContain("redis.call('EXISTS', jobs .. other) == 0");
    expect(script).toContain("redis.call('ZSCORE', jobs .. 'failed', other)");
    expect(script).toContain("redis.call('ZSCORE', jobs .. 'completed', other)");
    expect(script).toContain("redis.call('HEXISTS', job, 'svcHandled') == 1");
    expect(script).toContain("redis.call('ZADD', KEYS[2], seq, id)");
    expect(script).toContain("redis.call('SET', KEYS[3], id, 'PX', ttl)");
    expect(script).toContain("redis.call('SET', KEYS[1], last, 'PX', ARGV[8])");
    expect(script).toContain('return {1, gapFrom}');
    expect(script.indexOf('local function gone')).toBeLessThan(script.indexOf('not gone(holder)'));
  });

  it('answers the missing numbers the first time an event waits for a gap, and only the wait after', async () => {
    const first = fakeRedis([0, 120_000, 1]);
    expect(await new BoardOrder(first.redis, PREFIX, 120_000, 1).start('b1', 'd-x', 211, 0)).toStrictEqual({
      run: false,
      waitMs: 120_000,
      missing: { from: 1, to: 210 },
    });
    expect(first.calls[0]!.script).toContain("redis.call('HSETNX', job, 'svcGapWait', now) == 1");
    const again = fakeRedis([0, 90_000]);
    expect(await new BoardOrder(again.redis, PREFIX, 120_000, 1).start('b1', 'd-x', 211, 30_000)).toStrictEqual({ run: false, waitMs: 90_000 });
  });

  it("sends a script that counts the wait for a gap from the event's first turn, and marks an event that must wait as waiting for its turn until it runs", async () => {
    const { redis, calls } = fakeRedis([1, -1]);
    await new BoardOrder(redis, PREFIX, 0, 1).start('b1', 'd-x', 1, 0);
    const script = calls[0]!.script;
    expect(script).toContain("redis.call('HSET', job, 'svcFirstTurn', now)");
    expect(script).toContain('if now - first < gapWait then');
    expect(script).toContain('local answer = wait(gapWait - (now - first))');
    expect(script).toContain("if not probe then redis.call('HSET', job, 'svcTurnWait', 1) end");
    expect(script).toContain("redis.call('HDEL', job, 'svcTurnWait')");
  });
});

describe('board order: the end of an event (finish)', () => {
  it('sends the last, pending and lock keys, the job, its sequence, how long the last sequence is kept, the job key prefix and whether it was handled', async () => {
    const { redis, calls } = fakeRedis('d-next');
    const order = new BoardOrder(redis, PREFIX, 0, 60_000);
    await order.finish('b1', 'd-x', 3, true);
    await order.finish('b1', 'd-x', 3, false);
    const k = keys('b1');
    expect(calls.map((c) => [c.numKeys, ...c.args])).toEqual([
      [3, k.last, k.pending, k.lock, 'd-x', 3, BOARD_PLACE_KEPT_MS, PREFIX, '1'],
      [3, k.last, k.pending, k.lock, 'd-x', 3, BOARD_PLACE_KEPT_MS, PREFIX, '0'],
    ]);
  });

  it('answers the job to wake as the script names it, or null', async () => {
    expect(await new BoardOrder(fakeRedis('d-next').redis, PREFIX, 0, 1).finish('b1', 'd-x', 3, true)).toBe('d-next');
    expect(await new BoardOrder(fakeRedis(null).redis, PREFIX, 0, 1).finish('b1', 'd-x', 3, true)).toBeNull();
  });

  it('sends a script that marks a handled job, lets go of its lock, moves the board past it and names the lowest pending event', async () => {
    const { redis, calls } = fakeRedis(null);
    await new BoardOrder(redis, PREFIX, 0, 1).finish('b1', 'd-x', 3, true);
    const script = calls[0]!.script;
    expect(script).toContain("redis.call('HSET', ARGV[4] .. ARGV[1], 'svcHandled', 1)");
    expect(script).toContain("redis.call('DEL', KEYS[3])");
    expect(script).toContain("redis.call('ZREM', KEYS[2], ARGV[1])");
    expect(script).toContain("redis.call('SET', KEYS[1], seq, 'PX', ARGV[3])");
    expect(script).toContain('return waiting(ARGV[4])');
    expect(script).toContain("redis.call('HEXISTS', prefix .. next, 'svcTurnWait') == 1");
    expect(script).toContain("for _, next in ipairs(redis.call('ZRANGE', KEYS[2], 0, 99)) do");
  });
});

describe('board order: a failed attempt to be retried (release)', () => {
  it("sends a script that deletes the board's lock only when this job holds it", async () => {
    const { redis, calls } = fakeRedis(1);
    await expect(new BoardOrder(redis, PREFIX, 0, 1).release('b1', 'd-x')).resolves.toBeUndefined();
    expect(calls).toHaveLength(1);
    expect([calls[0]!.numKeys, ...calls[0]!.args]).toEqual([1, keys('b1').lock, 'd-x']);
    expect(calls[0]!.script).toContain("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end");
  });
});

describe('board order: an unordered kind handled (pass)', () => {
  it('sends the last, pending and passed keys, the sequence, the TTL and the job key prefix, and answers the job to wake', async () => {
    const { redis, calls } = fakeRedis('d-next');
    expect(await new BoardOrder(redis, PREFIX, 0, 45_000).pass('b1', 12)).toBe('d-next');
    const k = keys('b1');
    expect([calls[0]!.numKeys, ...calls[0]!.args]).toEqual([3, k.last, k.pending, k.passed, 12, 45_000, PREFIX]);
    expect(await new BoardOrder(fakeRedis(null).redis, PREFIX, 0, 1).pass('b1', 12)).toBeNull();
  });

  it("sends a script that records a sequence past the board's last one as passed, for the TTL", async () => {
    const { redis, calls } = fakeRedis(null);
    await new BoardOrder(redis, PREFIX, 0, 1).pass('b1', 12);
    const script = calls[0]!.script;
    expect(script).toContain("redis.call('ZADD', KEYS[3], seq, ARGV[1])");
    expect(script).toContain("redis.call('PEXPIRE', KEYS[3], ARGV[2])");
    expect(script).toContain('return waiting(ARGV[3])');
  });
});

describe('board order: the line an event writes when it starts waiting for a gap (logGapWait)', () => {
  /** A logger that keeps each line's level and fields. */
  function recordingLogger() {
    const lines: Array<[string, object]> = [];
    const at = (level: string) => (fields: object) => void lines.push([level, fields]);
    const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger } as unknown as WebhookLogger;
    return { logger, lines };
  }

  it('writes one info line with the board, the delivery, its sequence, the missing numbers and how long it waits', () => {
    const { logger, lines } = recordingLogger();
    logGapWait(logger, { board: 'b1', sequence: 211, deliveryId: 'd-x' }, { waitMs: 120_000, missing: { from: 1, to: 210 } });
    expect(lines).toEqual([['info', { board: 'b1', deliveryId: 'd-x', sequence: 211, missing: { from: 1, to: 210 }, waitMs: 120_000 }]]);
  });
});
