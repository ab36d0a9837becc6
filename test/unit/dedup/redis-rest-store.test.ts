import { inspect } from 'node:util';
import { DEFAULT_RETENTION_MS } from '../../../src/dedup/delivery-store';
import { redisRestStore, RedisRestStore, type RedisRestStoreOptions } from '../../../src/dedup/redis-rest-store';
import { COMMIT_SCRIPT, EXTEND_SCRIPT, RELEASE_SCRIPT } from '../../../src/dedup/redis-scripts';
import { svcBoardWebhook } from '../../../src';
import { boardEvent, signBoardEvent, silentLogger } from '../../../src/testing';

/**
 * The Redis REST store's own logic against a fake fetch: the requests it sends, how it reads their
 * answers, its timeout. What Redis does with the commands is tested against a real redis-server
 * behind a REST front in test/redis/redis-rest-store.test.ts.
 */
const URL_ = 'https://eu1-example.upstash.io';
const TOKEN = 'AXrestTOKENsecret0123456789abcdef';

interface Sent {
  readonly url: string;
  readonly init: RequestInit;
  readonly command: string[];
}

/** A fetch that records each request and answers with `answer(command)`: a Response, or a promise of one. */
function fakeFetch(answer: (command: string[]) => Response | Promise<Response>) {
  const sent: Sent[] = [];
  const fetch = (url: string, init: RequestInit): Promise<Response> => {
    const command = JSON.parse(init.body as string) as string[];
    sent.push({ url, init, command });
    return Promise.resolve(answer(command));
  };
  return { fetch, sent, commands: () => sent.map((s) => s.command) };
}

const result = (value: unknown, status = 200) => new Response(JSON.stringify({ result: value }), { status, headers: { 'Content-Type': 'application/json' } });
const store = (fetch: RedisRestStoreOptions['fetch'], options: Partial<RedisRestStoreOptions> = {}) =>
  redisRestStore({ url: URL_, token: TOKEN, fetch, ...options });

describe('the Redis REST store', () => {
  describe('the requests it sends', () => {
    it('POSTs each command to the URL as a JSON array of strings, with the token as a bearer, JSON typed', async () => {
      const { fetch, sent } = fakeFetch(() => result(null));
      const claimed = await store(fetch).claim('d1', 1500.2);
      const token = (claimed as { token: string }).token;
      expect(claimed.state).toBe('claimed');
      expect(token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.url).toBe(URL_);
      expect(sent[0]!.init.method).toBe('POST');
      expect(sent[0]!.init.headers).toEqual({ Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' });
      expect(sent[0]!.init.signal).toBeInstanceOf(AbortSignal);
      // The Redis store's claim: one SET, the lease rounded up, only if absent, returning the old value.
      expect(sent[0]!.command).toEqual(['SET', 'svc-webhooks:id:d1', `claim:${token}`, 'PX', '1501', 'NX', 'GET']);
    });

    it('gives each claim its own token', async () => {
      const { fetch } = fakeFetch(() => result(null));
      const s = store(fetch);
      const [a, b] = await Promise.all([s.claim('x', 1000), s.claim('x', 1000)]);
      expect((a as { token: string }).token).not.toBe((b as { token: string }).token);
    });

    it('commits, releases and extends with the Redis store’s scripts, each for the claim’s token only', async () => {
      const { fetch, commands } = fakeFetch(() => result(1));
      const s = store(fetch, { retentionMs: 5000.5 });
      await s.commit('0e3f6b9a-5a4e-4f0e-9a57-6c1d2b3a4f5e', 't1');
      await s.release('k', 't2');
      await s.extend('k', 't3', 2000.1);
      expect(commands()).toEqual([
        ['EVAL', COMMIT_SCRIPT, '1', 'svc-webhooks:0e3f6b9a-5a4e-4f0e-9a57-6c1d2b3a4f5e', 'claim:t1', 'done', '5001'],
        ['EVAL', RELEASE_SCRIPT, '1', 'svc-webhooks:id:k', 'claim:t2'],
        ['EVAL', EXTEND_SCRIPT, '1', 'svc-webhooks:id:k', 'claim:t3', '2001'],
      ]);
    });

    it('sends scripts that act only while the key holds the claim’s token (what they do: test/redis/)', () => {
      expect(COMMIT_SCRIPT).toContain("if v == false or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end");
      expect(RELEASE_SCRIPT).toBe("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0");
      expect(EXTEND_SCRIPT).toBe("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0");
    });

    it('keys ids as the Redis store does, under the given prefix', async () => {
      const { fetch, commands } = fakeFetch(() => result(null));
      const s = store(fetch, { prefix: 'app:' });
      await s.claim('0e3f6b9a-5a4e-4f0e-9a57-6c1d2b3a4f5e', 10);
      await s.claim('board:active', 10);
      expect(commands().map((c) => c[1])).toEqual(['app:0e3f6b9a-5a4e-4f0e-9a57-6c1d2b3a4f5e', 'app:id:board%3Aactive']);
    });

    it('commits for the default retention, a day and an hour', async () => {
      const { fetch, commands } = fakeFetch(() => result(1));
      const s = store(fetch);
      expect(s.retentionMs).toBe(DEFAULT_RETENTION_MS);
      await s.commit('k', 't');
      expect(commands()[0]![6]).toBe(String(DEFAULT_RETENTION_MS));
    });

    it('calls the global fetch, unbound, when given none', async () => {
      const saved = globalThis.fetch;
      const seen: unknown[] = [];
      globalThis.fetch = function (this: unknown) {
        seen.push(this);
        return Promise.resolve(result(null));
      } as typeof fetch;
      try {
        expect((await redisRestStore({ url: URL_, token: TOKEN }).claim('k', 10)).state).toBe('claimed');
      } finally {
        globalThis.fetch = saved;
      }
      expect(seen).toEqual([undefined]);
    });

    it('calls a given fetch unbound too', async () => {
      const seen: unknown[] = [];
      const s = store(function (this: unknown) {
        seen.push(this);
        return Promise.resolve(result(null));
      });
      await s.claim('k', 10);
      expect(seen).toEqual([undefined]);
    });
  });

  describe('how it reads the answers', () => {
    it.each([
      [null, 'claimed'],
      ['done', 'done'],
      ['claim:someone-else', 'busy'],
      ['', 'busy'],
    ])('reads a claim answered %p as %s', async (held, state) => {
      const { fetch } = fakeFetch(() => result(held));
      expect((await store(fetch).claim('d', 1000)).state).toBe(state);
    });

    it.each([
      [
        'an error answer (HTTP 400)',
        () => new Response(JSON.stringify({ error: 'ERR wrong number of arguments' }), { status: 400 }),
        /refused SET: ERR wrong number/,
      ],
      ['an error answer with HTTP 200', () => new Response(JSON.stringify({ error: 'ERR x' })), /refused SET: ERR x/],
      ['HTTP 401 without a body', () => new Response('', { status: 401 }), /SET with HTTP 401 and no result/],
      ['HTTP 500 with a result', () => result(null, 500), /SET with HTTP 500 and no result/],
      ['a body that is not JSON', () => new Response('<html>', { status: 200 }), /SET with HTTP 200 and no result/],
      ['JSON without a result', () => new Response('{}'), /SET with HTTP 200 and no result/],
      ['JSON null', () => new Response('null'), /SET with HTTP 200 and no result/],
    ])('fails the claim on %s', async (_what, answer, message) => {
      const { fetch } = fakeFetch(answer);
      await expect(store(fetch).claim('d', 1000)).rejects.toThrow(message);
    });

    it('fails on a network error, as fetch rejects', async () => {
      const s = store(() => Promise.reject(new TypeError('fetch failed')));
      await expect(s.commit('d', 't')).rejects.toThrow('fetch failed');
    });

    it('releases a claim whose SET failed, at once and again after commandTimeoutMs, in case the server carries it out late', async () => {
      const at: number[] = [];
      const { fetch, commands } = fakeFetch((command) => {
        at.push(Date.now());
        return command[0] === 'SET' ? new Response('', { status: 502 }) : result(0);
      });
      await expect(store(fetch, { commandTimeoutMs: 100 }).claim('d', 1000)).rejects.toThrow();
      await new Promise((resolve) => setImmediate(resolve));
      const [set, release] = commands();
      expect(release).toEqual(['EVAL', RELEASE_SCRIPT, '1', 'svc-webhooks:id:d', set![2]]);
      expect(commands()).toHaveLength(2);
      for (let waited = 0; waited < 5_000 && commands().length < 3; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(commands()).toEqual([set, release, release]);
      // Timers may fire a little early by the clock, never much.
      expect(at[2]! - at[0]!).toBeGreaterThanOrEqual(95);
    });
  });

  describe('a server slower than commandTimeoutMs', () => {
    it('fails the command at the timeout and aborts its request', async () => {
      const signals: AbortSignal[] = [];
      const s = store(
        (_url, init) => {
          signals.push(init.signal!);
          return new Promise<never>(() => undefined);
        },
        { commandTimeoutMs: 30 },
      );
      const started = Date.now();
      await expect(s.commit('d', 't')).rejects.toThrow('redis REST did not answer EVAL within 30 ms');
      expect(Date.now() - started).toBeGreaterThanOrEqual(25);
      expect(signals[0]!.aborted).toBe(true);
    });

    it('does not abort a request answered in time', async () => {
      const signals: AbortSignal[] = [];
      const s = store(
        (_url, init) => {
          signals.push(init.signal!);
          return Promise.resolve(result(1));
        },
        { commandTimeoutMs: 30 },
      );
      await s.commit('d', 't');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(signals[0]!.aborted).toBe(false);
    });

    it('makes a webhook answer 503 store_unavailable, with Retry-After, and run nothing', async () => {
      let runs = 0;
      const secret = 'rest-store-secret-0123456789abc';
      const webhook = svcBoardWebhook({
        secret,
        logger: silentLogger,
        store: store(() => new Promise<never>(() => undefined), { commandTimeoutMs: 50 }),
      }).onAny(() => void runs++);
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const answer = await webhook.receive({ body: signed.body, headers: signed.headers });
      expect([answer.status, JSON.parse(answer.body).code, answer.headers['Retry-After'], runs]).toEqual([503, 'store_unavailable', '5', 0]);
    });
  });

  describe('its token', () => {
    it('is in no error, however the server answers', async () => {
      const answers = [
        () => new Response(JSON.stringify({ error: `WRONGPASS invalid token ${TOKEN}` }), { status: 401 }),
        () => new Response('', { status: 403 }),
        () => Promise.reject(new Error('refused')),
      ];
      for (const answer of answers) {
        const error = await store(() => Promise.resolve(answer()))
          .claim('d', 10)
          .catch((err: unknown) => err);
        expect(String((error as Error).message)).not.toContain(TOKEN);
      }
      const timedOut = await store(() => new Promise<never>(() => undefined), { commandTimeoutMs: 10 })
        .claim('d', 10)
        .catch((err: unknown) => err);
      expect((timedOut as Error).message).not.toContain(TOKEN);
    });

    it('is not in the store when it is printed or serialized', () => {
      const s = store(() => Promise.resolve(result(null)));
      expect(JSON.stringify(s)).not.toContain(TOKEN);
      expect(inspect(s, { depth: 5, showHidden: true })).not.toContain(TOKEN);
    });
  });

  describe('its options', () => {
    it('needs a url and a token', () => {
      expect(() => redisRestStore({ token: TOKEN } as RedisRestStoreOptions)).toThrow(TypeError);
      expect(() => redisRestStore({ url: URL_ } as RedisRestStoreOptions)).toThrow(TypeError);
      expect(() => redisRestStore({ url: URL_, token: '' })).toThrow(TypeError);
    });

    it('takes an http:// or https:// URL, and never shows the value it refuses', () => {
      expect(() => redisRestStore({ url: 'http://127.0.0.1:8080', token: TOKEN })).not.toThrow();
      for (const url of ['redis://127.0.0.1:6379', `ftp://x/?_token=${TOKEN}`, 'not a url']) {
        let error: unknown;
        try {
          redisRestStore({ url, token: TOKEN });
        } catch (err) {
          error = err;
        }
        expect(error).toBeInstanceOf(TypeError);
        expect((error as Error).message).not.toContain(TOKEN);
      }
    });

    it('refuses a token that is no string without showing it', () => {
      expect(() => redisRestStore({ url: URL_, token: 42 as unknown as string })).toThrow(TypeError);
    });

    it('is a class too, and closes without a request', () => {
      const { fetch, sent } = fakeFetch(() => result(null));
      const s = new RedisRestStore({ url: URL_, token: TOKEN, fetch });
      expect(s.close()).toBeUndefined();
      expect(sent).toEqual([]);
    });
  });
});
