import { redisStore } from '../../../src/dedup/redis-store';
import { Cluster, Redis, resetIoredis } from '../../support/fake-ioredis';

/** The client `redisStore` opens itself, against the scripted ioredis: from `url`, or from `cluster`'s seed nodes. */
jest.mock('ioredis', () => jest.requireActual('../../support/fake-ioredis'));

beforeEach(() => resetIoredis());

describe('the client of a redis store', () => {
  it('from `url`, is one Redis that fails fast', () => {
    redisStore({ url: 'redis://h:1', commandTimeoutMs: 300 });
    expect([Redis.made.length, Cluster.made.length]).toEqual([1, 0]);
    expect(Redis.made[0]!.url).toBe('redis://h:1');
    expect(Redis.made[0]!.options).toMatchObject({ enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 300, connectTimeout: 1000 });
  });

  it('from `cluster`, is one Cluster on the seeds whose every node fails fast, and it is closed with the store', async () => {
    const store = redisStore({ cluster: ['redis://a:7000', 'redis://b:7001'], commandTimeoutMs: 1500 });
    expect([Redis.made.length, Cluster.made.length]).toEqual([0, 1]);
    const { nodes, options } = Cluster.made[0]!;
    expect(nodes).toEqual([
      { host: 'a', port: 7000 },
      { host: 'b', port: 7001 },
    ]);
    expect(options.enableOfflineQueue).toBe(false);
    expect(options.redisOptions).toMatchObject({ maxRetriesPerRequest: 0, commandTimeout: 1500, connectTimeout: 1500 });
    await store.close();
    expect(Cluster.made[0]!.quit).toHaveBeenCalledTimes(1);
  });

  it('keys an id that holds a UUID but is not one after `id:`', async () => {
    const uuid = '0e3f6b9a-5a4e-4f0e-9a57-6c1d2b3a4f5e';
    const store = redisStore({ url: 'redis://h:1' });
    for (const id of [`x${uuid}`, `${uuid}x`]) await store.claim(id, 10);
    expect(Redis.made[0]!.call.mock.calls.map((c) => c[1])).toEqual([`svc-webhooks:id:x${uuid}`, `svc-webhooks:id:${uuid}x`]);
  });
});
