import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { BoardOrder } from '../../src/inbox/board-order';
import { redisSuite } from '../support/inbox';

let redis: Redis;
// Declared before the suite's own hooks, so it runs before the suite stops redis-server.
afterAll(async () => {
  await redis?.quit();
});
const suite = redisSuite();

beforeAll(() => {
  redis = new Redis(suite.redis.url);
});

/** A BoardOrder on its own key prefix, and a way to make the BullMQ job hashes its scripts look at. */
function order(gapWaitMs = 60_000) {
  const prefix = `bo${randomUUID().slice(0, 8)}:board:`;
  const job = async (id: string, state?: 'completed' | 'failed') => {
    await redis.hset(`${prefix}${id}`, 'name', 'task.updated');
    if (state !== undefined) await redis.zadd(`${prefix}${state}`, Date.now(), id);
  };
  return { order: new BoardOrder(redis, prefix, gapWaitMs, 60_000), job, prefix };
}

describe('board order in Redis', () => {
  it('hands a board to one event at a time, in sequence, and names the next one to wake', async () => {
    const { order: o, job } = order();
    await Promise.all(['a', 'b', 'c'].map((id) => job(id)));
    const now = Date.now();
    // The first time it waits for a gap it says which numbers it waits for (the worker logs them once).
    expect(await o.start('B', 'b', 2, now)).toEqual({ run: false, waitMs: now + 60_000 - now, missing: { from: 1, to: 1 } });
    expect(await o.start('B', 'a', 1, now)).toEqual({ run: true });
    expect(await o.start('B', 'c', 3, now)).toEqual({ run: false, waitMs: 0 }); // the board is taken
    expect(await o.finish('B', 'a', 1, true)).toBe('b');
    expect(await o.start('B', 'b', 2, now)).toEqual({ run: true });
  });

  it("reports the missing sequence numbers once gapWaitMs has passed since the event's first turn", async () => {
    const { order: o, job } = order(1000);
    await job('x');
    const first = Date.now();
    expect(await o.start('B', 'x', 4, first)).toEqual({ run: false, waitMs: 1000, missing: { from: 1, to: 3 } });
    expect(await o.start('B', 'x', 4, first + 400)).toEqual({ run: false, waitMs: 600 });
    expect(await o.start('B', 'x', 4, first + 1000)).toEqual({ run: true, gap: { from: 1, to: 3 } });
  });

  it('wakes only an event that waits for its turn, never one that waits for the retry of a failed attempt', async () => {
    const { order: o, job } = order();
    await Promise.all(['a', 'b'].map((id) => job(id)));
    const now = Date.now();
    expect(await o.start('B', 'a', 1, now)).toEqual({ run: true });
    await o.release('B', 'a'); // failed; BullMQ holds it back for its retry delay
    expect(await o.pass('B', 3)).toBeNull(); // an unordered event taken up meanwhile does not wake it
    expect(await o.start('B', 'b', 2, now)).toEqual({ run: false, waitMs: 0 }); // b waits for a, its turn to come
    expect(await o.start('B', 'a', 1, now)).toEqual({ run: true }); // a's retry
    expect(await o.finish('B', 'a', 1, true)).toBe('b');
    expect(await o.start('B', 'b', 2, now)).toEqual({ run: true });
    expect(await o.finish('B', 'b', 2, true)).toBeNull();
  });

  it('passes over a failed event waiting for its retry to wake the next one that waits for its turn', async () => {
    const { order: o, job } = order();
    await Promise.all(['a', 'late', 'b', 'c'].map((id) => job(id)));
    const now = Date.now();
    expect(await o.start('B', 'a', 1, now)).toEqual({ run: true });
    await o.finish('B', 'a', 1, true);
    expect(await o.start('B', 'late', 1, now)).toEqual({ run: true }); // a late repeat of sequence 1
    await o.release('B', 'late'); // failed; it waits for its retry, still pending
    expect(await o.start('B', 'b', 2, now)).toEqual({ run: true }); // its successors do not wait for it
    expect(await o.start('B', 'c', 3, now)).toEqual({ run: false, waitMs: 0 });
    expect(await o.finish('B', 'b', 2, true)).toBe('c');
  });

  it("keeps a board's last handed-over sequence for a year after its last event, and the rest of its state for the TTL", async () => {
    const { order: o, job, prefix } = order();
    await Promise.all(['a', 'b'].map((id) => job(id)));
    const now = Date.now();
    await o.start('B', 'a', 1, now);
    await o.start('B', 'b', 3, now);
    await o.finish('B', 'a', 1, true);
    const year = 365 * 24 * 60 * 60 * 1000;
    expect(await redis.pttl(`${prefix}order:B:last`)).toBeGreaterThan(year - 60_000);
    expect(await redis.pttl(`${prefix}order:B:pending`)).toBeLessThanOrEqual(60_000);
    expect(await redis.pttl(`${prefix}order:B:pending`)).toBeGreaterThan(0);
  });

  it('is not blocked by a lock or a pending event whose job is gone, dead or finished without recording its end', async () => {
    const { order: o, job, prefix } = order();
    await job('dead', 'failed');
    await job('done', 'completed');
    await job('next');
    const now = Date.now();
    // Each took its place and then vanished without finishing in the order.
    await redis.zadd(`${prefix}order:B:pending`, 1, 'done', 2, 'dead');
    await redis.set(`${prefix}order:B:lock`, 'vanished');
    expect(await o.start('B', 'next', 3, now)).toEqual({ run: true });
  });

  it('lets ordered events skip the sequence numbers of unordered kinds already handled', async () => {
    const { order: o, job } = order();
    await job('u');
    const now = Date.now();
    await o.pass('B', 1);
    await o.pass('B', 2);
    expect(await o.start('B', 'u', 3, now)).toEqual({ run: true });
  });

  it('does not hand an event over twice: a re-run after its handled end was recorded is answered handled', async () => {
    const { order: o, job } = order();
    await job('a');
    const now = Date.now();
    expect(await o.start('B', 'a', 1, now)).toEqual({ run: true });
    await o.finish('B', 'a', 1, true);
    expect(await o.start('B', 'a', 1, now)).toEqual({ run: false, handled: true });
  });

  it('runs a dead letter again when it is retried: giving up on an event does not mark it handled', async () => {
    const { order: o, job } = order();
    await job('a');
    const now = Date.now();
    await o.start('B', 'a', 1, now);
    await o.finish('B', 'a', 1, false);
    expect(await o.start('B', 'a', 1, now)).toEqual({ run: true });
  });
});
