import { Redis } from 'ioredis';
import pino from 'pino';
import { redisRestStore, redisStore, svcBoardWebhook, type RedisRestStore, type RedisRestStoreOptions } from '../../src';
import { boardEvent, signBoardEvent, type SignedDelivery } from '../../src/testing';
import { RedisRestFront } from '../support/redis-rest-front';
import { RedisServer } from '../support/redis-server';

const TOKEN = 'rest-front-token-0123456789abcdef';
const secret = 'rest-store-secret-0123456789abcd';

let redis: RedisServer;
let front: RedisRestFront;
let admin: Redis;

const store = (options: Partial<RedisRestStoreOptions> = {}): RedisRestStore => redisRestStore({ url: front.url, token: TOKEN, ...options });

async function claimed(result: Promise<{ state: string; token?: string }>): Promise<string> {
  const r = await result;
  if (r.state !== 'claimed' || r.token === undefined) throw new Error(`expected a claim, got ${r.state}`);
  return r.token;
}

beforeAll(async () => {
  redis = await RedisServer.start();
  front = await RedisRestFront.start(redis.url, TOKEN);
  admin = new Redis(redis.url);
});

afterAll(async () => {
  admin.disconnect();
  await front.close();
  await redis.close();
});

describe('the Redis REST store, against a real redis-server behind a REST front', () => {
  it('runs each of 50 deliveries’ handlers exactly once when each is sent 3 times at once to two receivers', async () => {
    const runs = new Map<string, number>();
    // Two webhooks, each with its own store: two isolates that share only the Redis behind the front.
    // A generous timeout: this is about racing copies, not a slow server (tested below).
    const receivers = [0, 1].map(() =>
      svcBoardWebhook({ secret, logger: false, store: store({ prefix: 'race:', commandTimeoutMs: 10_000 }) }).onAny(async (event) => {
        runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }),
    );
    const deliveries: SignedDelivery[] = Array.from({ length: 50 }, () => signBoardEvent(boardEvent('task.created'), { secret }));
    // As svc does: an answer that is not 2xx (409 while another copy runs, 503) is sent again later.
    const send = async (signed: SignedDelivery, receiver: (typeof receivers)[number]) => {
      for (let attempt = 1; ; attempt++) {
        const answer = await receiver.receive({ body: signed.body, headers: signed.headers });
        if (answer.status === 200 || attempt === 30) return answer;
        expect([409, 503]).toContain(answer.status);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const answers = await Promise.all(deliveries.flatMap((signed) => [0, 1, 2].map((i) => send(signed, receivers[i % 2]!))));
    expect(runs.size).toBe(50);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    // Each delivery: one answer that ran it, and two duplicates.
    expect(answers.filter((a) => a.body === '{"ok":true}')).toHaveLength(50);
    expect(answers.filter((a) => a.body === '{"ok":true,"duplicate":true}')).toHaveLength(100);
  }, 60_000);

  it('claims an id atomically: of 30 concurrent claims exactly one wins', async () => {
    const [a, b] = [store(), store()];
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).claim('concurrent-rest', 60_000)));
    expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
  });

  it('keeps the keys the Redis store keeps: a delivery committed over REST is done for redisStore too, for the retention', async () => {
    const s = store({ prefix: 'shared:', retentionMs: 90_000_000 });
    await s.commit('kept', await claimed(s.claim('kept', 60_000)));
    expect(await admin.get('shared:id:kept')).toBe('done');
    const ttl = await admin.pttl('shared:id:kept');
    expect(ttl).toBeGreaterThan(89_000_000);
    const tcp = redisStore({ url: redis.url, prefix: 'shared:' });
    try {
      expect((await tcp.claim('kept', 60_000)).state).toBe('done');
      // And the other way round.
      await tcp.commit('over-tcp', await claimed(tcp.claim('over-tcp', 60_000)));
      expect((await s.claim('over-tcp', 60_000)).state).toBe('done');
    } finally {
      await tcp.close();
    }
  });

  it('holds a claim for its lease (busy), and lets it lapse after', async () => {
    const s = store({ prefix: 'lease:' });
    await claimed(s.claim('short', 100));
    expect((await s.claim('short', 100)).state).toBe('busy');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await s.claim('short', 100)).state).toBe('claimed');
  });

  it('commits and releases only while the claim is still ours', async () => {
    const s = store({ prefix: 'token:' });
    const first = await claimed(s.claim('taken', 50));
    await new Promise((resolve) => setTimeout(resolve, 80));
    const second = await claimed(s.claim('taken', 60_000));
    await s.commit('taken', first);
    await s.release('taken', first);
    expect(await admin.get('token:id:taken')).toBe(`claim:${second}`);
    await s.release('taken', second);
    expect(await admin.get('token:id:taken')).toBeNull();
  });

  it('extends a lease it holds, and not one it lost', async () => {
    const s = store({ prefix: 'extend:' });
    const token = await claimed(s.claim('long', 1_000));
    await s.extend('long', token, 60_000);
    expect(await admin.pttl('extend:id:long')).toBeGreaterThan(59_000);
    await s.extend('long', 'not-ours', 5);
    expect(await admin.pttl('extend:id:long')).toBeGreaterThan(59_000);
  });

  describe('when the server cannot serve', () => {
    it('answers a wrong token: the delivery fails closed (503), and no log line carries a token', async () => {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
      const wrong = 'wrong-token-0123456789abcdefghij';
      const webhook = svcBoardWebhook({ secret, logger, store: redisRestStore({ url: front.url, token: wrong }) }).onAny(() => undefined);
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const answer = await webhook.receive({ body: signed.body, headers: signed.headers });
      expect([answer.status, JSON.parse(answer.body).code]).toEqual([503, 'store_unavailable']);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join('\n')).not.toContain(wrong);
      expect(lines.join('\n')).not.toContain(TOKEN);
    });

    it('fails closed (503) past commandTimeoutMs when the server takes the request and never answers', async () => {
      let runs = 0;
      const webhook = svcBoardWebhook({ secret, logger: false, store: store({ commandTimeoutMs: 200 }) }).onAny(() => void runs++);
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      front.stall();
      try {
        const started = Date.now();
        const answer = await webhook.receive({ body: signed.body, headers: signed.headers });
        expect([answer.status, JSON.parse(answer.body).code, runs]).toEqual([503, 'store_unavailable', 0]);
        expect(Date.now() - started).toBeLessThan(2_000);
      } finally {
        front.stall(false);
      }
      // Once it answers again, svc's retry is handled.
      expect((await webhook.receive({ body: signed.body, headers: signed.headers })).status).toBe(200);
      expect(runs).toBe(1);
    });
  });
});
