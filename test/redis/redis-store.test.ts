import { Redis } from 'ioredis';
import { redisStore, type RedisStore } from '../../src';
import { RedisServer } from '../support/redis-server';

let redis: RedisServer;
let admin: Redis;
const stores: RedisStore[] = [];

function store(options: Parameters<typeof redisStore>[0] = {}): RedisStore {
  const s = redisStore({ url: redis.url, ...options });
  stores.push(s);
  return s;
}

async function claimed(result: Promise<{ state: string; token?: string }>): Promise<string> {
  const r = await result;
  if (r.state !== 'claimed' || r.token === undefined) throw new Error(`expected a claim, got ${r.state}`);
  return r.token;
}

beforeAll(async () => {
  redis = await RedisServer.start();
  admin = new Redis(redis.url);
});

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  admin.disconnect();
  await redis.close();
});

describe('redis store (against a real redis-server)', () => {
  it('claims an id atomically: of 50 concurrent claims from two stores exactly one wins', async () => {
    const [a, b] = [store(), store()];
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).claim('concurrent-id', 60_000)));
    expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.state === 'busy')).toHaveLength(49);
  });

  it('a committed id is done for the retention window; the key carries that expiry', async () => {
    const s = store({ prefix: 'ttl:', retentionMs: 90_000_000 });
    await s.commit('kept', await claimed(s.claim('kept', 60_000)));
    expect((await s.claim('kept', 60_000)).state).toBe('done');
    const ttl = await admin.pttl('ttl:id:kept');
    expect(ttl).toBeGreaterThan(89_000_000);
    expect(ttl).toBeLessThanOrEqual(90_000_000);
  });

  describe('commit is token-checked', () => {
    it('does not overwrite the claim of another attempt that took over after our lease lapsed', async () => {
      const s = store({ prefix: 'cas1:' });
      const stale = await claimed(s.claim('taken-over', 50));
      await new Promise((r) => setTimeout(r, 80));
      const current = await claimed(s.claim('taken-over', 60_000));
      await s.commit('taken-over', stale);
      expect(await admin.get('cas1:id:taken-over')).toBe(`claim:${current}`);
      await s.commit('taken-over', current);
      expect(await admin.get('cas1:id:taken-over')).toBe('done');
    });

    it('records the delivery when its claim is gone (lapsed, or lost in a restart): the handlers did succeed', async () => {
      const s = store({ prefix: 'cas2:' });
      const token = await claimed(s.claim('lost-claim', 60_000));
      await admin.del('cas2:id:lost-claim');
      await s.commit('lost-claim', token);
      expect((await s.claim('lost-claim', 60_000)).state).toBe('done');
    });

    it('repeated (a retried commit that already went through) leaves it done, with a fresh retention', async () => {
      const s = store({ prefix: 'cas3:', retentionMs: 90_000_000 });
      const token = await claimed(s.claim('twice', 60_000));
      await s.commit('twice', token);
      await s.commit('twice', token);
      expect(await admin.get('cas3:id:twice')).toBe('done');
      expect(await admin.pttl('cas3:id:twice')).toBeGreaterThan(89_000_000);
    });
  });

  it('a claim holds for its leaseMs: busy meanwhile, claimable after it lapses', async () => {
    const s = store();
    await claimed(s.claim('leased', 200));
    expect((await s.claim('leased', 200)).state).toBe('busy');
    const pttl = await admin.pttl('svc-webhooks:id:leased');
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(200);
    await new Promise((r) => setTimeout(r, 250));
    expect((await s.claim('leased', 200)).state).toBe('claimed');
  });

  it('extend renews the lease of its own claim only', async () => {
    const s = store();
    const token = await claimed(s.claim('extended', 200));
    await s.extend('extended', token, 5000);
    expect(await admin.pttl('svc-webhooks:id:extended')).toBeGreaterThan(4000);
    await s.extend('extended', 'someone-else', 100_000);
    expect(await admin.pttl('svc-webhooks:id:extended')).toBeLessThanOrEqual(5000);
  });

  it('a release frees only its own claim', async () => {
    const s = store();
    const stale = await claimed(s.claim('released', 100));
    await new Promise((r) => setTimeout(r, 150));
    const current = await claimed(s.claim('released', 60_000));
    await s.release('released', stale);
    expect((await s.claim('released', 60_000)).state).toBe('busy');
    await s.release('released', current);
    expect((await s.claim('released', 60_000)).state).toBe('claimed');
  });

  it('keeps receivers with different prefixes apart', async () => {
    const [a, b] = [store({ prefix: 'app-a:' }), store({ prefix: 'app-b:' })];
    await a.commit('shared-id', await claimed(a.claim('shared-id', 60_000)));
    expect((await a.claim('shared-id', 60_000)).state).toBe('done');
    expect((await b.claim('shared-id', 60_000)).state).toBe('claimed');
  });

  it('fails fast (rejects within the command timeout) while redis answers nothing, and recovers', async () => {
    const s = store({ commandTimeoutMs: 300 });
    await claimed(s.claim('warm-up', 1000));
    redis.pause();
    try {
      const started = Date.now();
      await expect(s.claim('while-paused', 1000)).rejects.toThrow(/did not answer/);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      redis.unpause();
    }
    await new Promise((r) => setTimeout(r, 100));
    expect((await s.claim('after-pause', 1000)).state).toBe('claimed');
  });

  it('fails fast while redis is down, and recovers when it is back with its data', async () => {
    const s = store({ commandTimeoutMs: 300 });
    await s.commit('before-outage', await claimed(s.claim('before-outage', 1000)));
    await redis.stop();
    try {
      await expect(s.claim('during-outage', 1000)).rejects.toThrow();
    } finally {
      await redis.resume();
    }
    let state = '';
    for (let i = 0; i < 50 && state !== 'done'; i++) {
      state = await s.claim('before-outage', 1000).then(
        (r) => r.state,
        () => 'unavailable',
      );
      if (state !== 'done') await new Promise((r) => setTimeout(r, 100));
    }
    expect(state).toBe('done');
  });

  it('takes exactly one of `client`, `url` or `cluster`', () => {
    expect(() => redisStore({})).toThrow(TypeError);
    expect(() => redisStore({ url: redis.url, client: admin })).toThrow(TypeError);
    expect(() => redisStore({ url: redis.url, cluster: [redis.url] })).toThrow(TypeError);
    expect(() => redisStore({ client: admin, cluster: [redis.url] })).toThrow(TypeError);
  });

  it('keeps an id of svc (a UUID) under the prefix as it is, and any other id after `id:`, percent-encoded', async () => {
    const s = store({ prefix: 'forms:' });
    const uuid = '0e3f6b9a-5a4e-4f0e-9a57-6c1d2b3a4f5e';
    for (const id of [uuid, 'board:active', 'é{x}*']) await s.commit(id, await claimed(s.claim(id, 60_000)));
    expect((await admin.keys('forms:*')).sort()).toEqual([`forms:${uuid}`, 'forms:id:%C3%A9%7Bx%7D%2A', 'forms:id:board%3Aactive']);
  });

  it('keeps an id with a lone surrogate apart from the one with U+FFFD in its place (Redis would receive both as U+FFFD)', async () => {
    const s = store({ prefix: 'lone:' });
    await s.commit('a\ud800', await claimed(s.claim('a\ud800', 60_000)));
    expect((await s.claim('a\ufffd', 60_000)).state).toBe('claimed');
    expect((await s.claim('a\ud800', 60_000)).state).toBe('done');
  });

  it('works with a client the user created, and leaves it open on close()', async () => {
    const s = redisStore({ client: admin, prefix: 'own-client:' });
    await s.commit('x', await claimed(s.claim('x', 1000)));
    expect(await admin.get('own-client:id:x')).toBe('done');
    await s.close();
    expect(await admin.ping()).toBe('PONG');
  });

  it('closes the connection it made from `url` on close()', async () => {
    const name = `own-url-${Date.now()}`;
    const s = redisStore({ url: `${redis.url}?connectionName=${name}` });
    await s.claim('x-own', 1000);
    const listed = async () => String(await admin.call('CLIENT', 'LIST')).includes(`name=${name}`);
    expect(await listed()).toBe(true);
    await s.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(await listed()).toBe(false);
  });

  it('leaves no timer behind once a command has answered', async () => {
    const s = store({ commandTimeoutMs: 60_000 });
    await s.claim('warm-up', 1000);
    // The command timers are the ones of 60 s: each one started must be cleared once its command has
    // answered. Other timers of the process (ioredis's own, jest's) start and end as they will.
    const started = new Set<unknown>();
    const cleared = new Set<unknown>();
    const realSet = global.setTimeout;
    const realClear = global.clearTimeout;
    const setSpy = jest.spyOn(global, 'setTimeout').mockImplementation(((fn: (...args: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
      const timer = realSet(fn, ms, ...(rest as []));
      if (ms === 60_000) started.add(timer);
      return timer;
    }) as typeof setTimeout);
    const clearSpy = jest.spyOn(global, 'clearTimeout').mockImplementation(((timer?: NodeJS.Timeout) => {
      cleared.add(timer);
      realClear(timer);
    }) as typeof clearTimeout);
    try {
      for (let i = 0; i < 20; i++) await s.claim(`timer-${i}`, 1000);
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
    expect(started.size).toBeGreaterThanOrEqual(20);
    expect([...started].filter((timer) => !cleared.has(timer))).toEqual([]);
  });

  it('a command sent while the connection is being re-established waits for it, within the timeout', async () => {
    const s = store({ commandTimeoutMs: 3000 });
    await s.claim('before-reconnect', 1000);
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await new Promise((r) => setTimeout(r, 20)); // the store's client notices and starts reconnecting
    expect((await s.claim('during-reconnect', 1000)).state).toBe('claimed');
  });
});
