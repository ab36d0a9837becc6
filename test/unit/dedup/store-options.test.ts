import { memoryStore } from '../../../src/dedup/memory-store';
import { postgresStore } from '../../../src/dedup/postgres-store';
import { redisStore, type RedisCommander } from '../../../src/dedup/redis-store';

const call = async () => 'OK';

describe('a client or pool given to a store', () => {
  it.each([
    ['an empty object', {}],
    ['null', null],
    ['a string', 'redis://127.0.0.1:6379'],
    ['an object whose call is not a function', { call: 'call' }],
  ])('is refused by redisStore() with a TypeError naming the option when it is %s', (_what, client) => {
    expect(() => redisStore({ client: client as unknown as RedisCommander })).toThrow(/`client` must be an ioredis client \(with call\)/);
  });

  it('is taken by redisStore() when it has call', () => {
    expect(redisStore({ client: { call } as unknown as RedisCommander }).retentionMs).toBeGreaterThan(0);
  });

  it.each([
    ['an empty object', {}],
    ['null', null],
    ['an object whose connect is not a function', { connect: true }],
  ])('is refused by postgresStore() with a TypeError naming the option when it is %s', (_what, pool) => {
    expect(() => postgresStore({ pool: pool as never })).toThrow(/`pool` must be a pg Pool \(with connect\)/);
  });

  // A function has a `call` method of its own (Function.prototype.call): an object is what is asked for.
  it.each([
    ['redisStore()', () => redisStore({ client: Object.assign(() => undefined, { call }) as unknown as RedisCommander })],
    ['postgresStore()', () => postgresStore({ pool: Object.assign(() => undefined, { connect: async () => ({}) }) as never })],
  ])('is refused by %s with a TypeError when it is a function, even one carrying the methods', (_what, make) => {
    expect(make).toThrow(TypeError);
  });

  it('is taken by postgresStore() when it has connect', () => {
    expect(postgresStore({ pool: { connect: async () => ({ query: call, release: () => undefined }) } as never }).retentionMs).toBeGreaterThan(0);
  });
});

describe("a store's logger", () => {
  it.each([
    ['an object without warn', {}],
    ['null', null],
    ['a function', () => undefined],
  ])('is refused with a TypeError when it is %s', (_what, logger) => {
    expect(() => memoryStore({ logger: logger as never })).toThrow(TypeError);
  });

  it('is anything with warn (its warnings: memory-store.test.ts)', () => {
    expect(() => memoryStore({ logger: { warn: () => undefined } })).not.toThrow();
  });
});
