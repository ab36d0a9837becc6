import { DEFAULT_RETENTION_MS } from '../../../src/dedup/delivery-store';
import { redisStore, type RedisCommander } from '../../../src/dedup/redis-store';
import { Redis, resetIoredis, scriptedClient } from '../../support/fake-ioredis';

/**
 * The Redis store's own logic against a scripted client: the commands it sends, how it reads their
 * answers, its timeouts and its wait for a reconnecting client. What Redis does with the commands
 * (atomicity, expiry, the scripts) is tested against a real redis-server in test/redis/.
 */
const fakeClient = scriptedClient;

const never = () => new Promise<never>(() => undefined);

describe('redis store commands', () => {
  it('claims with one SET of the prefixed key to claim:<token>, for the lease rounded up, only if absent, returning the old value', async () => {
    const { client, calls } = fakeClient(() => Promise.resolve(null));
    const result = await redisStore({ client }).claim('d1', 1500.2);
    expect(result.state).toBe('claimed');
    const token = (result as { token: string }).token;
    expect(token).toMatch(/^[0-9a-f-]{36}$/);
    expect(calls).toEqual([['SET', 'svc-webhooks:id:d1', `claim:${token}`, 'PX', 1501, 'NX', 'GET']]);
  });

  it('gives each claim its own token', async () => {
    const { client } = fakeClient(() => Promise.resolve(null));
    const store = redisStore({ client });
    const [a, b] = await Promise.all([store.claim('x', 1000), store.claim('y', 1000)]);
    expect((a as { token: string }).token).not.toBe((b as { token: string }).token);
  });

  it('reads `done` as a handled delivery and any other held value as busy', async () => {
    for (const [held, state] of [
      ['done', 'done'],
      ['claim:someone-else', 'busy'],
      ['', 'busy'],
    ] as const) {
      const { client } = fakeClient(() => Promise.resolve(held));
      expect((await redisStore({ client }).claim('d', 1000)).state).toBe(state);
    }
  });

  it("keys svc's ids (lower-case UUIDs) by the prefix and the id, and any other id by the prefix, `id:` and the id percent-encoded", async () => {
    const { client, calls } = fakeClient(() => Promise.resolve(null));
    const store = redisStore({ client });
    for (const id of ['0e3f6b9a-5a4e-4f0e-9a57-6c1d2b3a4f5e', '0E3F6B9A-5A4E-4F0E-9A57-6C1D2B3A4F5E', 'board:active', 'x{y}*', '%', 'a\ud800b'])
      await store.claim(id, 10);
    expect(calls.map((c) => c[1])).toEqual([
      'svc-webhooks:0e3f6b9a-5a4e-4f0e-9a57-6c1d2b3a4f5e',
      'svc-webhooks:id:0E3F6B9A-5A4E-4F0E-9A57-6C1D2B3A4F5E',
      'svc-webhooks:id:board%3Aactive',
      'svc-webhooks:id:x%7By%7D%2A',
      'svc-webhooks:id:%25',
      'svc-webhooks:id:a%uD800b',
    ]);
  });

  it('uses the given prefix for every key', async () => {
    const { client, calls } = fakeClient(() => Promise.resolve(null));
    const store = redisStore({ client, prefix: 'app:' });
    const { token } = (await store.claim('k', 10)) as { token: string };
    await store.commit('k', token);
    await store.release('k', token);
    await store.extend('k', token, 10);
    expect(calls.map((c) => (c[0] === 'SET' ? c[1] : c[3]))).toEqual(['app:id:k', 'app:id:k', 'app:id:k', 'app:id:k']);
  });

  it('commits with a token-checked script that stores `done` for the retention rounded up', async () => {
    const { client, calls } = fakeClient();
    await redisStore({ client, retentionMs: 1000.5 }).commit('d', 'tok');
    expect(calls).toHaveLength(1);
    const [command, script, keys, key, claim, done, ttl] = calls[0]!;
    expect([command, keys, key, claim, done, ttl]).toEqual(['EVAL', 1, 'svc-webhooks:id:d', 'claim:tok', 'done', 1001]);
    expect(script).toContain("'SET', KEYS[1], ARGV[2], 'PX', ARGV[3]");
  });

  it('keeps handled ids for a day plus an hour by default', async () => {
    const { client, calls } = fakeClient();
    const store = redisStore({ client });
    expect(store.retentionMs).toBe(DEFAULT_RETENTION_MS);
    await store.commit('d', 'tok');
    expect(calls[0]![6]).toBe(DEFAULT_RETENTION_MS);
  });

  it('releases and extends with token-checked scripts (DEL, PEXPIRE for the lease rounded up)', async () => {
    const { client, calls } = fakeClient();
    const store = redisStore({ client });
    await store.release('d', 'tok');
    await store.extend('d', 'tok', 2000.1);
    expect(calls[0]!.slice(2)).toEqual([1, 'svc-webhooks:id:d', 'claim:tok']);
    expect(calls[0]![1]).toContain("redis.call('DEL', KEYS[1])");
    expect(calls.map((c) => c[0])).toEqual(['EVAL', 'EVAL']);
    expect(calls[1]!.slice(2)).toEqual([1, 'svc-webhooks:id:d', 'claim:tok', 2001]);
    expect(calls[1]![1]).toContain("redis.call('PEXPIRE', KEYS[1], ARGV[2])");
  });

  it('a claim that fails is rejected, and its possible late effect is released with the same token', async () => {
    const { client, calls } = fakeClient((call) => (call[0] === 'SET' ? Promise.reject(new Error('connection lost')) : Promise.resolve(0)));
    await expect(redisStore({ client }).claim('d', 1000)).rejects.toThrow('connection lost');
    await new Promise((r) => setImmediate(r));
    expect(calls).toHaveLength(2);
    const claimed = String(calls[0]![2]);
    expect(calls[1]!.slice(0, 1).concat(calls[1]!.slice(2))).toEqual(['EVAL', 1, 'svc-webhooks:id:d', claimed]);
  });

  it('a claim whose release fails as well is still just rejected (nothing unhandled)', async () => {
    const { client } = fakeClient(() => Promise.reject(new Error('down')));
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      await expect(redisStore({ client }).claim('d', 1000)).rejects.toThrow('down');
      await new Promise((r) => setTimeout(r, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});

describe('redis store timeouts', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('a command unanswered for commandTimeoutMs fails, not a moment earlier', async () => {
    const { client } = fakeClient(never);
    const outcome = jest.fn();
    redisStore({ client, commandTimeoutMs: 250 })
      .commit('d', 'tok')
      .then(
        () => outcome('resolved'),
        (err: Error) => outcome(err.message),
      );
    await jest.advanceTimersByTimeAsync(249);
    expect(outcome).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome).toHaveBeenCalledWith(expect.stringMatching(/did not answer EVAL within 250 ms/));
  });

  it('waits 1 s by default', async () => {
    const { client } = fakeClient(never);
    const outcome = jest.fn();
    redisStore({ client }).release('d', 'tok').catch(outcome);
    await jest.advanceTimersByTimeAsync(999);
    expect(outcome).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome).toHaveBeenCalledTimes(1);
  });

  it('leaves no timer behind once a command has answered, or failed', async () => {
    const { client } = fakeClient((call) => (call[0] === 'SET' ? Promise.resolve(null) : Promise.reject(new Error('no'))));
    const store = redisStore({ client, commandTimeoutMs: 60_000 });
    await store.claim('d', 1000);
    await expect(store.commit('d', 'tok')).rejects.toThrow('no');
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('redis store and a reconnecting client', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it.each(['connecting', 'connect', 'reconnecting'])('while %s, commands wait for ready, sharing one listener', async (status) => {
    const { client, calls, becomeReady } = fakeClient();
    client.status = status;
    const store = redisStore({ client, commandTimeoutMs: 5000 });
    const done = Promise.all([store.release('a', 't'), store.release('b', 't')]);
    await jest.advanceTimersByTimeAsync(100);
    expect(calls).toHaveLength(0);
    expect(client.once).toHaveBeenCalledTimes(1);
    expect(client.once).toHaveBeenCalledWith('ready', expect.any(Function));
    becomeReady();
    await done;
    expect(calls).toHaveLength(2);
  });

  it('after ready, a later reconnect waits for the next ready', async () => {
    const { client, calls, becomeReady } = fakeClient();
    client.status = 'reconnecting';
    const store = redisStore({ client, commandTimeoutMs: 5000 });
    const first = store.release('a', 't');
    becomeReady();
    await first;
    client.status = 'reconnecting';
    const second = store.release('b', 't');
    await jest.advanceTimersByTimeAsync(100);
    expect(calls).toHaveLength(1);
    expect(client.once).toHaveBeenCalledTimes(2);
    becomeReady();
    await second;
    expect(calls).toHaveLength(2);
  });

  it('a wait for ready still ends at the command timeout', async () => {
    const { client, calls } = fakeClient();
    client.status = 'connecting';
    const outcome = jest.fn();
    redisStore({ client, commandTimeoutMs: 300 }).release('a', 't').catch(outcome);
    await jest.advanceTimersByTimeAsync(300);
    expect(outcome).toHaveBeenCalledTimes(1);
    expect(calls).toHaveLength(0);
  });

  it.each([['ready'], ['wait'], ['end'], [undefined]])('with status %s, a command is sent at once', async (status) => {
    const { client, calls } = fakeClient();
    client.status = status;
    await redisStore({ client }).release('a', 't');
    expect(calls).toHaveLength(1);
    expect(client.once).not.toHaveBeenCalled();
  });

  it('a client without once() is never waited for', async () => {
    const { client, calls } = fakeClient();
    client.status = 'connecting';
    const { once: _once, ...withoutOnce } = client;
    await redisStore({ client: withoutOnce as RedisCommander }).release('a', 't');
    expect(calls).toHaveLength(1);
  });
});

describe('redis store options', () => {
  it('takes exactly one of `client` or `url`', () => {
    const { client } = fakeClient();
    expect(() => redisStore({})).toThrow(TypeError);
    expect(() => redisStore({ client, url: 'redis://127.0.0.1:1' })).toThrow(TypeError);
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses commandTimeoutMs and retentionMs of %p', (bad) => {
    const { client } = fakeClient();
    expect(() => redisStore({ client, commandTimeoutMs: bad })).toThrow(RangeError);
    expect(() => redisStore({ client, retentionMs: bad })).toThrow(RangeError);
  });

  it('accepts small positive numbers', () => {
    const { client } = fakeClient();
    expect(redisStore({ client, commandTimeoutMs: 0.5, retentionMs: 1 }).retentionMs).toBe(1);
  });

  it('refuses a prefix that is not a string', () => {
    const { client } = fakeClient();
    expect(() => redisStore({ client, prefix: 42 as unknown as string })).toThrow(TypeError);
  });

  it('leaves a client it was given open on close()', async () => {
    const { client } = fakeClient();
    await redisStore({ client }).close();
    expect(client.quit).not.toHaveBeenCalled();
    expect(client.disconnect).not.toHaveBeenCalled();
  });
});

describe('redis store made from a url', () => {
  function storeFromUrl(options: { commandTimeoutMs?: number; quitFails?: boolean } = {}) {
    let store: ReturnType<typeof redisStore> | undefined;
    resetIoredis();
    Redis.quitFails = options.quitFails === true;
    jest.isolateModules(() => {
      jest.doMock('ioredis', () => ({ Redis }));
      const { redisStore: make } = require('../../../src/dedup/redis-store') as typeof import('../../../src/dedup/redis-store');
      store = make({ url: 'redis://127.0.0.1:6390/2', ...(options.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: options.commandTimeoutMs }) });
    });
    jest.dontMock('ioredis');
    return { store: store!, client: Redis.made[Redis.made.length - 1]! };
  }

  it('creates a client tuned to fail fast: no offline queue, no retried requests, the command timeout', () => {
    const { client } = storeFromUrl({ commandTimeoutMs: 1500 });
    expect(client.url).toBe('redis://127.0.0.1:6390/2');
    expect(client.options).toMatchObject({ enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 1500, connectTimeout: 1500 });
  });

  it('gives the connection at least a second, and reconnects sooner at first (100 ms a try, at most 2 s)', () => {
    const { client } = storeFromUrl({ commandTimeoutMs: 200 });
    expect(client.options.connectTimeout).toBe(1000);
    const retry = client.options.retryStrategy as (attempt: number) => number;
    expect([1, 5, 20, 21, 100].map(retry)).toEqual([100, 500, 2000, 2000, 2000]);
  });

  it('listens for connection errors, so they never go unhandled', () => {
    const { client } = storeFromUrl();
    expect(client.on).toHaveBeenCalledWith('error', expect.any(Function));
    const listener = client.on.mock.calls[0]![1] as (err: Error) => unknown;
    expect(() => listener(new Error('ECONNREFUSED'))).not.toThrow();
  });

  it('closes the client it made on close()', async () => {
    const { store, client } = storeFromUrl();
    await store.close();
    expect(client.quit).toHaveBeenCalledTimes(1);
    expect(client.disconnect).not.toHaveBeenCalled();
  });

  it('disconnects when quitting fails', async () => {
    const { store, client } = storeFromUrl({ quitFails: true });
    await store.close();
    expect(client.disconnect).toHaveBeenCalledTimes(1);
  });
});
