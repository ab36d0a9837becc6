import express from 'express';
import request from 'supertest';
import { redisStore, svcBoardWebhook, type RedisStore } from '../../src';
import { silentLogger } from '../support/apps';
import { post } from '../support/post';
import { RedisServer } from '../support/redis-server';
import { BOARD_SECRET, fixture, signBoard } from '../support/sign';

let redis: RedisServer;
const stores: RedisStore[] = [];

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await redis.close();
});

/** One receiver instance: its own Express app and Redis connection, sharing the Redis server. */
function instance(handler: () => unknown, prefix: string) {
  const store = redisStore({ url: redis.url, prefix });
  stores.push(store);
  const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, store }).on('task.created', handler);
  const app = express();
  app.use(board);
  return app;
}

describe('two instances sharing one Redis', () => {
  it('run the handler once when the same delivery arrives 50 times at once', async () => {
    let runs = 0;
    const handler = async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 50));
    };
    const apps = [instance(handler, 'burst:'), instance(handler, 'burst:')];
    const signed = signBoard(fixture('board', 'task.created'));
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => post(apps[i % 2]!, '/webhooks/board', signed)));
    expect(runs).toBe(1);
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length + statuses.filter((s) => s === 409).length).toBe(50);
    expect(responses.filter((r) => r.status === 200 && r.body.duplicate !== true)).toHaveLength(1);
  });

  it('run the handler once for sequential duplicates, whichever instance gets them', async () => {
    const handler = jest.fn();
    const apps = [instance(handler, 'seq:'), instance(handler, 'seq:')];
    const event = fixture('board', 'task.created');
    for (let i = 0; i < 6; i++) await post(apps[i % 2]!, '/webhooks/board', signBoard(event)).expect(200);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('let the retry run a handler that failed once, on the other instance: one success in total', async () => {
    let attempts = 0;
    let successes = 0;
    const handler = () => {
      attempts++;
      if (attempts === 1) throw new Error('transient');
      successes++;
    };
    const [a, b] = [instance(handler, 'retry:'), instance(handler, 'retry:')];
    const event = fixture('board', 'task.created');
    await post(a, '/webhooks/board', signBoard(event)).expect(500);
    await post(b, '/webhooks/board', signBoard(event)).expect(200, { ok: true });
    await post(a, '/webhooks/board', signBoard(event)).expect(200, { ok: true, duplicate: true });
    expect([attempts, successes]).toEqual([2, 1]);
  });

  it('fail closed with 503 and Retry-After while the store is unreachable, running no handler', async () => {
    const handler = jest.fn();
    const store = redisStore({ url: redis.url, prefix: 'down:', commandTimeoutMs: 300 });
    stores.push(store);
    const app = express().use(svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, store }).on('task.created', handler));
    const event = fixture('board', 'task.created');
    redis.pause();
    try {
      const started = Date.now();
      const res = await post(app, '/webhooks/board', signBoard(event));
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('store_unavailable');
      expect(res.headers['retry-after']).toBeDefined();
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      redis.unpause();
    }
    expect(handler).not.toHaveBeenCalled();
    await post(app, '/webhooks/board', signBoard(event)).expect(200);
    expect(handler).toHaveBeenCalledTimes(1);
    await request(app).get('/').expect(404);
  });
});
