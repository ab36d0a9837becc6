import { Redis } from 'ioredis';
import { redisStore, type RedisStore, type RedisStoreOptions } from '../../src';
import { describeParkingLot, parkedDelivery } from '../support/parking-contract';
import { RedisServer } from '../support/redis-server';

/** The Redis store's parking lot against a real redis-server: the shared contract, then its keys. */
let redis: RedisServer;
let admin: Redis;
const stores: RedisStore[] = [];
let prefixes = 0;

function store(options: Partial<RedisStoreOptions> = {}): RedisStore {
  const s = redisStore({ url: redis.url, prefix: `lot${++prefixes}:`, ...options });
  stores.push(s);
  return s;
}

beforeAll(async () => {
  redis = await RedisServer.start({ appendOnly: false });
  admin = new Redis(redis.url);
});

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  admin.disconnect();
  await redis.close();
});

describeParkingLot('redis store', {
  open: async (options) => store(options),
  unreachable: async (commandTimeoutMs) => store({ url: 'redis://127.0.0.1:1', commandTimeoutMs }),
  freezable: async (commandTimeoutMs) => ({ store: store({ commandTimeoutMs }), freeze: () => redis.pause(), thaw: () => redis.unpause() }),
});

describe("the redis store's parking keys", () => {
  it('keeps failures in a hash under <prefix>failed:, for the retention after the last failure', async () => {
    const s = store({ prefix: 'keys1:', retentionMs: 90_000_000 });
    await s.parking.noteFailure('a:b{c}', 1234, 'boom');
    expect(await admin.hgetall('keys1:failed:a%3Ab%7Bc%7D')).toEqual({ firstAt: '1234', attempts: '1', lastError: '"boom"' });
    const ttl = await admin.pttl('keys1:failed:a%3Ab%7Bc%7D');
    expect(ttl).toBeGreaterThan(89_000_000);
    expect(ttl).toBeLessThanOrEqual(90_000_000);
  });

  it('keeps a parked delivery as JSON with a base64 body under <prefix>{parked}:id:, indexed by parkedAt, for parkedRetentionMs', async () => {
    const s = store({ prefix: 'keys2:', parkedRetentionMs: 5_000_000 });
    const parked = parkedDelivery({ id: 'x y', parkedAt: 4242, body: new Uint8Array([0xff, 0]) });
    await s.parking.park(parked);
    expect(JSON.parse((await admin.get('keys2:{parked}:id:x%20y'))!)).toMatchObject({ id: 'x y', body: '/wA=', parkedAt: 4242 });
    expect(await admin.pttl('keys2:{parked}:id:x%20y')).toBeGreaterThan(4_900_000);
    expect(await admin.zrange('keys2:{parked}', 0, -1, 'WITHSCORES')).toEqual(['x%20y', '4242']);
    const deadline = Number(await admin.zscore('keys2:{parked}:deadlines', 'x%20y'));
    expect(Math.abs(deadline - (Date.now() + 5_000_000))).toBeLessThan(2000);
    await s.parking.drop('x y');
    expect(await admin.keys('keys2:*')).toEqual([]);
  });

  it('lists around a record that is gone early (evicted, deleted) and takes it out of the index', async () => {
    const s = store({ prefix: 'keys3:', maxParked: 2 });
    const [a, b] = [parkedDelivery({ parkedAt: 1 }), parkedDelivery({ parkedAt: 2 })];
    await s.parking.park(a);
    await s.parking.park(b);
    await admin.del(`keys3:{parked}:id:${a.id}`);
    expect(await s.parking.list(1)).toEqual([b]);
    expect(await admin.zrange('keys3:{parked}', 0, -1)).toEqual([b.id]);
    expect(await admin.zrange('keys3:{parked}:deadlines', 0, -1)).toEqual([b.id]);
    expect(await s.parking.park(parkedDelivery())).toBe(true);
  });

  it('shares one lot between stores of the same prefix, and none between prefixes', async () => {
    const [a, b, other] = [store({ prefix: 'shared:' }), store({ prefix: 'shared:' }), store({ prefix: 'not-shared:' })];
    const parked = parkedDelivery();
    await a.parking.park(parked);
    await a.parking.noteFailure('f', 1, 'e');
    expect(await b.parking.get(parked.id)).toEqual(parked);
    expect(await b.parking.failure('f')).toEqual({ firstAt: 1, attempts: 1, lastError: 'e' });
    expect(await other.parking.get(parked.id)).toBeUndefined();
    expect(await other.parking.failure('f')).toBeUndefined();
  });
});
