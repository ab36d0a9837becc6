import { DEFAULT_RETENTION_MS } from '../../../src/dedup/delivery-store';
import { durableObjectStore, DurableObjectStore } from '../../../src/dedup/durable-object-store';
import { svcBoardWebhook } from '../../../src';
import { boardEvent, signBoardEvent, silentLogger } from '../../../src/testing';
import { objectNamespace } from '../../support/object-storage';

/**
 * The Durable Object store's own logic, with its objects in this process: which object keeps an
 * id, what it sends, how it reads answers, its timeout. The store in a real Worker, with isolates
 * racing on one id, is tested in workerd (test/runtimes/workerd-durable-object.test.ts).
 */
describe('the Durable Object store', () => {
  describe('claims, through its objects', () => {
    it('claims, commits, and then answers done for the id', async () => {
      const store = durableObjectStore(objectNamespace().namespace);
      const claim = await store.claim('d1', 1000);
      expect(claim).toEqual({ state: 'claimed', token: expect.any(String) });
      expect(await store.claim('d1', 1000)).toEqual({ state: 'busy' });
      await store.commit('d1', (claim as { token: string }).token);
      expect(await store.claim('d1', 1000)).toEqual({ state: 'done' });
    });

    it('releases, so that a retry claims the id again; a stale token releases nothing', async () => {
      const store = durableObjectStore(objectNamespace().namespace);
      const first = (await store.claim('d1', 1000)) as { token: string };
      await store.release('d1', 'not-the-token');
      expect(await store.claim('d1', 1000)).toEqual({ state: 'busy' });
      await store.release('d1', first.token);
      expect((await store.claim('d1', 1000)).state).toBe('claimed');
    });

    it('sends the lease, the retention and extensions in whole ms, with its token', async () => {
      const { namespace, objects } = objectNamespace();
      jest.spyOn(Date, 'now').mockReturnValue(5_000);
      try {
        const store = durableObjectStore(namespace, { shards: 1, retentionMs: 60_000.2 });
        const { token } = (await store.claim('d1', 999.1)) as { token: string };
        const storage = [...objects.values()][0]!.storage;
        expect(storage.records.get('d1')).toEqual({ v: `claim:${token}`, until: 6_000 });
        await store.extend('d1', token, 2000.5);
        expect(storage.records.get('d1')).toEqual({ v: `claim:${token}`, until: 7_001 });
        await store.commit('d1', token);
        expect(storage.records.get('d1')).toEqual({ v: 'done', until: 65_001 });
      } finally {
        jest.restoreAllMocks();
      }
    });

    it('gives each claim a token of its own', async () => {
      const store = durableObjectStore(objectNamespace().namespace);
      const a = (await store.claim('d1', 1)) as { token: string };
      const b = (await store.claim('d2', 1)) as { token: string };
      expect(a.token).not.toBe(b.token);
    });
  });

  describe('its shards', () => {
    it('spread ids over `shards` objects named by the prefix, one id always in one object', async () => {
      const { namespace, objects } = objectNamespace();
      const store = durableObjectStore(namespace, { shards: 8, prefix: 'app:' });
      for (let i = 0; i < 400; i++) await store.claim(`delivery-${i}`, 1000);
      expect([...objects.keys()].sort()).toEqual(['app:0', 'app:1', 'app:2', 'app:3', 'app:4', 'app:5', 'app:6', 'app:7']);
      for (const { storage } of objects.values()) expect(storage.records.size).toBeGreaterThan(20);
      const shard = store.shardOf('delivery-7');
      expect(objects.get(`app:${shard}`)!.storage.records.has('delivery-7')).toBe(true);
      expect(new DurableObjectStore(namespace, { shards: 8, prefix: 'other:' }).shardOf('delivery-7')).toBe(shard);
    });

    it('are the same in every isolate: the hash of an id is fixed', () => {
      const store = durableObjectStore(objectNamespace().namespace);
      expect(['', 'a', '2f1e7c3a-0b4d-4e5f-8a9b-0c1d2e3f4a5b'].map((id) => store.shardOf(id))).toEqual([5, 12, 7]);
    });

    it('default to 16, under the prefix svc-webhooks:', async () => {
      const { namespace, objects } = objectNamespace();
      const store = durableObjectStore(namespace);
      for (let i = 0; i < 300; i++) await store.claim(`d${i}`, 1000);
      expect(objects.size).toBe(16);
      expect([...objects.keys()].every((name) => /^svc-webhooks:(\d|1[0-5])$/.test(name))).toBe(true);
    });
  });

  describe('its options', () => {
    it('default the retention to a day and an hour', () => {
      expect(durableObjectStore(objectNamespace().namespace).retentionMs).toBe(DEFAULT_RETENTION_MS);
    });

    it.each([
      ['shards: 0', { shards: 0 }, RangeError],
      ['shards: 1.5', { shards: 1.5 }, RangeError],
      ['shards: 1025', { shards: 1025 }, RangeError],
      ["shards: '4'", { shards: '4' }, RangeError],
      ['commandTimeoutMs: 0', { commandTimeoutMs: 0 }, RangeError],
      ['retentionMs: -1', { retentionMs: -1 }, RangeError],
      ['an unknown option', { shard: 4 }, TypeError],
    ])('refuse %s', (_name, options, type) => {
      expect(() => durableObjectStore(objectNamespace().namespace, options as never)).toThrow(type);
    });

    it.each([
      ['nothing', undefined],
      ['a string', 'SVC_DEDUP'],
      ['an object without get', { idFromName: () => 1 }],
    ])('refuse %s as the namespace, naming the binding', (_name, namespace) => {
      expect(() => durableObjectStore(namespace as never)).toThrow(/Durable Object namespace binding/);
    });
  });

  describe('an object that does not answer in time, or answers wrong', () => {
    it('fails a claim after commandTimeoutMs, naming the command, and releases the claim it may have made', async () => {
      const released: unknown[] = [];
      const { namespace } = objectNamespace(async (object, request) => {
        const command = (await request.clone().json()) as { op: string };
        if (command.op === 'claim') {
          void object.fetch(request);
          return new Promise<never>(() => undefined);
        }
        released.push(command);
        return object.fetch(request);
      });
      const store = durableObjectStore(namespace, { commandTimeoutMs: 30 });
      const started = Date.now();
      await expect(store.claim('d1', 60_000)).rejects.toThrow('the de-dup Durable Object did not answer claim within 30 ms');
      expect(Date.now() - started).toBeLessThan(1000);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(released).toEqual([{ op: 'release', id: 'd1', token: expect.any(String) }]);
      // The late claim was released: the delivery is not blocked for its 60 s lease.
      const next = durableObjectStore(objectNamespace().namespace);
      expect((await next.claim('d1', 1)).state).toBe('claimed');
    });

    it('aborts the request it gave up on', async () => {
      let signal: AbortSignal | undefined;
      const { namespace } = objectNamespace(async (_object, request) => {
        signal = request.signal;
        return new Promise<never>(() => undefined);
      });
      await expect(durableObjectStore(namespace, { commandTimeoutMs: 20 }).commit('d1', 't')).rejects.toThrow('did not answer commit');
      expect(signal!.aborted).toBe(true);
    });

    it.each([
      ['a 500 with an error', () => Response.json({ error: 'storage exploded' }, { status: 500 }), 'answered claim with HTTP 500: storage exploded'],
      ['a 400 with an error', () => Response.json({ error: 'unknown op' }, { status: 400 }), 'answered claim with HTTP 400: unknown op'],
      ['a body that is not JSON', () => new Response('<html>', { status: 200 }), 'answered claim with HTTP 200'],
      ['JSON that is not an object', () => Response.json(null), 'answered claim with HTTP 200'],
    ])('fails on %s', async (_name, answer, message) => {
      const { namespace } = objectNamespace(async () => answer());
      await expect(durableObjectStore(namespace).claim('d1', 1000)).rejects.toThrow(message);
    });

    it('makes a webhook answer 503 store_unavailable, with Retry-After, and run nothing', async () => {
      let runs = 0;
      const secret = 'durable-object-secret-0123456789';
      const { namespace } = objectNamespace(() => new Promise<never>(() => undefined));
      const webhook = svcBoardWebhook({ secret, logger: silentLogger, store: durableObjectStore(namespace, { commandTimeoutMs: 50 }) }).onAny(
        () => void runs++,
      );
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const answer = await webhook.receive({ body: signed.body, headers: signed.headers });
      expect([answer.status, JSON.parse(answer.body).code, answer.headers['Retry-After'], runs]).toEqual([503, 'store_unavailable', '5', 0]);
    });
  });

  it('runs the handlers of a delivery sent three times at once exactly once, through a webhook', async () => {
    let runs = 0;
    const secret = 'durable-object-secret-0123456789';
    const webhook = svcBoardWebhook({ secret, logger: silentLogger, store: durableObjectStore(objectNamespace().namespace) }).onAny(async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    const signed = signBoardEvent(boardEvent('task.created'), { secret });
    const answers = await Promise.all([0, 1, 2].map(() => webhook.receive({ body: signed.body, headers: signed.headers })));
    expect(runs).toBe(1);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    expect((await webhook.receive({ body: signed.body, headers: signed.headers })).body).toBe('{"ok":true,"duplicate":true}');
  });
});
