import { DEFAULT_MAX_PARKED, DEFAULT_PARKED_RETENTION_MS, type ParkedDelivery } from '../../../src/dedup/parking-lot';
import { DROP_SCRIPT, LIST_SCRIPT, NOTE_FAILURE_SCRIPT, PARK_SCRIPT } from '../../../src/dedup/redis-parking';
import { redisStore } from '../../../src/dedup/redis-store';
import { scriptedClient, type Call } from '../../support/fake-ioredis';

/**
 * The Redis store's parking lot against a scripted client: the commands and scripts it sends, with
 * which keys and arguments, and how it reads their answers. What Redis does with them (atomicity,
 * expiry, the bound) is tested against a real redis-server and a cluster in test/redis/.
 */
const parked: ParkedDelivery = {
  id: 'a:b',
  webhook: 'bot',
  kind: 'message',
  reason: 'schema',
  parkedAt: 1_700_000_000_000,
  firstFailedAt: 1_699_000_000_000,
  attempts: 3,
  lastError: 'boom',
  headers: { 'x-svc-delivery': 'a:b' },
  body: new Uint8Array([0xff, 0x00, 0x41]),
  replayedAt: 1_700_000_500_000,
};
const record = JSON.stringify({ ...parked, body: '/wBB' });

function lot(answer: (call: Call) => unknown = () => 1, options: Record<string, unknown> = {}) {
  const { client, calls } = scriptedClient((call) => Promise.resolve(answer(call)));
  const store = redisStore({ client, prefix: 'p:', ...options });
  return { parking: store.parking, calls };
}

describe('redis parking: failures', () => {
  it('notes a failure with one script on the failure hash: the time, the error as JSON, the retention rounded up', async () => {
    const { parking, calls } = lot(() => 1, { retentionMs: 1000.2 });
    await parking.noteFailure('a:b', 1234.5, 'bad \ud800');
    expect(calls).toEqual([['EVAL', NOTE_FAILURE_SCRIPT, 1, 'p:failed:a%3Ab', '1234.5', '"bad \\ud800"', 1001]]);
  });

  it("keeps a failure for the store's retention by default", async () => {
    const { parking, calls } = lot();
    await parking.noteFailure('d', 1, 'e');
    expect(calls[0]![6]).toBe(90_000_000);
  });

  it('keeps the first time, counts the attempts, replaces the error and restarts the expiry, in that script', () => {
    expect(NOTE_FAILURE_SCRIPT).toContain("redis.call('HSETNX', KEYS[1], 'firstAt', ARGV[1])");
    expect(NOTE_FAILURE_SCRIPT).toContain("redis.call('HINCRBY', KEYS[1], 'attempts', 1)");
    expect(NOTE_FAILURE_SCRIPT).toContain("redis.call('HSET', KEYS[1], 'lastError', ARGV[2])");
    expect(NOTE_FAILURE_SCRIPT).toContain("redis.call('PEXPIRE', KEYS[1], ARGV[3])");
  });

  it('reads a failure with one HMGET, numbers as numbers and the error from JSON', async () => {
    const { parking, calls } = lot(() => ['1234.5', '3', '"bad \\ud800"']);
    expect(await parking.failure('a:b')).toEqual({ firstAt: 1234.5, attempts: 3, lastError: 'bad \ud800' });
    expect(calls).toEqual([['HMGET', 'p:failed:a%3Ab', 'firstAt', 'attempts', 'lastError']]);
  });

  it('answers no failure when the hash is gone', async () => {
    const { parking } = lot(() => [null, null, null]);
    expect(await parking.failure('d')).toBeUndefined();
  });
});

describe('redis parking: parked deliveries', () => {
  it('parks with one script on the index, the deadlines and the record: JSON with the body in base64', async () => {
    const { parking, calls } = lot(() => 1, { parkedRetentionMs: 5000.5, maxParked: 7 });
    expect(await parking.park(parked)).toBe(true);
    expect(calls).toEqual([['EVAL', PARK_SCRIPT, 3, 'p:{parked}', 'p:{parked}:deadlines', 'p:{parked}:id:a%3Ab', 'a%3Ab', parked.parkedAt, record, 5001, 7]]);
  });

  it('parks for 7 days, at most 10,000, by default', async () => {
    const { parking, calls } = lot();
    await parking.park(parked);
    expect(calls[0]!.slice(-2)).toEqual([DEFAULT_PARKED_RETENTION_MS, DEFAULT_MAX_PARKED]);
    expect([DEFAULT_PARKED_RETENTION_MS, DEFAULT_MAX_PARKED]).toEqual([604_800_000, 10_000]);
  });

  it('keeps only the bytes of a body that is a view into a larger buffer', async () => {
    const { parking, calls } = lot();
    const whole = new Uint8Array([1, 2, 0xff, 0x00, 0x41, 3]);
    await parking.park({ ...parked, body: whole.subarray(2, 5) });
    expect(calls[0]![8]).toBe(record);
  });

  it('answers false when the script refused the delivery (the lot is full)', async () => {
    const { parking } = lot(() => 0);
    expect(await parking.park(parked)).toBe(false);
  });

  it('checks the bound in the script, and keeps the record, the index entry and the deadline', () => {
    expect(PARK_SCRIPT).toContain("redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return 0 end");
    expect(PARK_SCRIPT).toContain("redis.call('ZSCORE', KEYS[1], ARGV[1]) == false");
    expect(PARK_SCRIPT).toContain("redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[4])");
    expect(PARK_SCRIPT).toContain("redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])");
    expect(PARK_SCRIPT).toContain("redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])");
  });

  it('prunes expired entries first, in the scripts that park and list', () => {
    for (const script of [PARK_SCRIPT, LIST_SCRIPT]) {
      expect(script).toMatch(/^local t = redis.call\('TIME'\)/);
      expect(script).toContain("redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. now)");
    }
  });

  it('lists with one script, all by default, reading each record', async () => {
    const { parking, calls } = lot(() => [record, record]);
    expect(await parking.list()).toEqual([parked, parked]);
    expect(calls).toEqual([['EVAL', LIST_SCRIPT, 2, 'p:{parked}', 'p:{parked}:deadlines', 'p:{parked}:id:', -1]]);
    await parking.list(5);
    expect(calls[1]![6]).toBe(5);
    expect(LIST_SCRIPT).toContain("redis.call('ZRANGE', KEYS[1], 0, -1)");
    expect(LIST_SCRIPT).toContain("redis.call('GET', ARGV[1] .. member)");
  });

  it('gets one record with GET, its body as a Uint8Array', async () => {
    const { parking, calls } = lot(() => record);
    const got = await parking.get('a:b');
    expect(got).toEqual(parked);
    expect(got!.body.constructor).toBe(Uint8Array);
    expect(calls).toEqual([['GET', 'p:{parked}:id:a%3Ab']]);
  });

  it('gets nothing for a record that is gone', async () => {
    const { parking } = lot(() => null);
    expect(await parking.get('d')).toBeUndefined();
  });

  it('drops with one script, true only when there was a record', async () => {
    const { parking, calls } = lot(() => 1);
    expect(await parking.drop('a:b')).toBe(true);
    expect(calls).toEqual([['EVAL', DROP_SCRIPT, 3, 'p:{parked}', 'p:{parked}:deadlines', 'p:{parked}:id:a%3Ab', 'a%3Ab']]);
    expect(DROP_SCRIPT).toContain("return redis.call('DEL', KEYS[3])");
    expect(await lot(() => 0).parking.drop('a:b')).toBe(false);
  });

  it("uses the store's default prefix", async () => {
    const { client, calls } = scriptedClient(() => Promise.resolve(null));
    const store = redisStore({ client });
    await store.parking.get('x');
    await Promise.resolve(store.parking.failure('x')).catch(() => undefined);
    expect(calls.map((c) => c[1])).toEqual(['svc-webhooks:{parked}:id:x', 'svc-webhooks:failed:x']);
  });
});

describe('redis parking: timeouts and failures', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it("fails a call that is not answered within the store's commandTimeoutMs", async () => {
    const { client } = scriptedClient(() => new Promise(() => undefined));
    const { parking } = redisStore({ client, commandTimeoutMs: 300 });
    const failure = Promise.resolve(parking.failure('d'));
    const settled = jest.fn();
    failure.then(settled, settled);
    await jest.advanceTimersByTimeAsync(299);
    expect(settled).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    await expect(failure).rejects.toThrow(/did not answer HMGET within 300 ms/);
  });

  it('passes on a failed command', async () => {
    const { client } = scriptedClient(() => Promise.reject(new Error('READONLY')));
    const { parking } = redisStore({ client });
    await expect(parking.park(parked)).rejects.toThrow('READONLY');
    await expect(parking.noteFailure('d', 1, 'e')).rejects.toThrow('READONLY');
  });
});

describe('redis parking: options', () => {
  it.each([
    ['parkedRetentionMs', 0],
    ['maxParked', 0],
    ['maxParked', 2.5],
  ])('refuses %s: %p, naming it', (option, value) => {
    const { client } = scriptedClient();
    expect(() => redisStore({ client, [option]: value })).toThrow(new RegExp(`\`${option}\``));
  });
});
