import type { Cluster as IoredisCluster } from 'ioredis';
import { inboxConnection, replicasHold, requireQueuePackages } from '../../../src/inbox/redis-connection';
import { Cluster, Redis, resetIoredis } from '../../support/fake-ioredis';

/**
 * The inbox's ioredis clients against a scripted ioredis: the options each role gets (a producer
 * fails fast, a worker retries for ever), the reconnect delays, and the swallowed error events.
 */
jest.mock('ioredis', () => jest.requireActual('../../support/fake-ioredis'));

const clients = Redis.made;
const clusters = Cluster.made;

beforeEach(() => resetIoredis());

describe("the inbox's Redis connection", () => {
  it('for a producer, fails a command at once while Redis is unreachable: no offline queue, no retried request, a 2 s connect timeout', () => {
    const client = inboxConnection('redis://inbox:6379/1', 'producer');
    expect(client).toBe(clients[0]);
    expect(clients).toHaveLength(1);
    const { retryStrategy, ...options } = clients[0]!.options;
    expect(clients[0]!.url).toBe('redis://inbox:6379/1');
    expect(options).toStrictEqual({ enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000 });
    expect(typeof retryStrategy).toBe('function');
  });

  it('for a worker, retries its blocking commands for ever (maxRetriesPerRequest null, as BullMQ requires)', () => {
    inboxConnection('rediss://inbox:6380', 'worker');
    const { retryStrategy, ...options } = clients[0]!.options;
    expect(clients[0]!.url).toBe('rediss://inbox:6380');
    expect(options).toStrictEqual({ maxRetriesPerRequest: null });
    expect(typeof retryStrategy).toBe('function');
  });

  it.each(['producer', 'worker'] as const)('for a %s, reconnects after 100 ms more per attempt, at most 2 s apart', (role) => {
    inboxConnection('redis://h', role);
    const { retryStrategy } = clients[0]!.options;
    expect([1, 2, 5, 19, 20, 21, 100].map(retryStrategy)).toEqual([100, 200, 500, 1900, 2000, 2000, 2000]);
  });

  it.each(['producer', 'worker'] as const)('for a %s, listens to its error events and ignores them (failures surface per command)', (role) => {
    inboxConnection('redis://h', role);
    const { on } = clients[0]!;
    expect(on).toHaveBeenCalledTimes(1);
    const [event, listener] = on.mock.calls[0]! as [string, (err: Error) => unknown];
    expect(event).toBe('error');
    expect(listener(new Error('ECONNREFUSED'))).toBeUndefined();
  });
});

describe("the inbox's Redis Cluster connection", () => {
  const seeds = { cluster: ['rediss://app:s%3Acret@10.0.0.1:7000', 'rediss://app:s%3Acret@[::1]:7001', 'rediss://app:s%3Acret@h3'], waitForReplicas: 1 };

  it("for a producer, opens a Cluster on the seeds, failing fast on every node, with the seeds' credentials and TLS", () => {
    const client = inboxConnection(seeds, 'producer');
    expect(client).toBe(clusters[0]);
    expect(clients).toHaveLength(0);
    const { clusterRetryStrategy, redisOptions, ...options } = clusters[0]!.options;
    expect(clusters[0]!.nodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: '::1', port: 7001 },
      { host: 'h3', port: 6379 },
    ]);
    expect(options).toStrictEqual({ enableOfflineQueue: false });
    expect(redisOptions).toStrictEqual({ maxRetriesPerRequest: 0, connectTimeout: 2000, username: 'app', password: 's:cret', tls: {} });
    expect([1, 5, 20, 100].map(clusterRetryStrategy)).toEqual([100, 500, 2000, 2000]);
  });

  it('for a worker, retries for ever on every node (maxRetriesPerRequest null, as BullMQ requires), without TLS or credentials for redis:// seeds', () => {
    inboxConnection({ cluster: ['redis://h:7000'], waitForReplicas: 0 }, 'worker');
    const { clusterRetryStrategy, redisOptions, ...options } = clusters[0]!.options;
    expect(options).toStrictEqual({});
    expect(redisOptions).toStrictEqual({ maxRetriesPerRequest: null });
    expect(typeof clusterRetryStrategy).toBe('function');
  });

  it.each(['producer', 'worker'] as const)('for a %s, listens to its error events and ignores them', (role) => {
    inboxConnection(seeds, role);
    expect(clusters[0]!.on.mock.calls.map(([event]) => event)).toEqual(['error']);
  });
});

describe('waiting for replicas (Redis WAIT)', () => {
  /** A cluster whose pipeline records its commands and answers WAIT with `acknowledged`. */
  function cluster(answer: [Error | null, unknown] | undefined) {
    const sent: unknown[][] = [];
    interface FakePipeline {
      exists(...args: unknown[]): FakePipeline;
      call(...args: unknown[]): FakePipeline;
      exec(): Promise<unknown>;
    }
    const pipeline: FakePipeline = {
      exists: (...args) => (sent.push(['exists', ...args]), pipeline),
      call: (...args) => (sent.push(['call', ...args]), pipeline),
      exec: () => Promise.resolve(answer === undefined ? null : [[null, 1], answer]),
    };
    return { client: { pipeline: () => pipeline } as unknown as IoredisCluster, sent };
  }

  it("sends WAIT in one pipeline with the queue's key, so it goes on the connection to that key's master, for the time left rounded up", async () => {
    const { client, sent } = cluster([null, 2]);
    await replicasHold(client, '{svc-webhooks}:board:id', 2, 1234.2);
    expect(sent).toEqual([
      ['exists', '{svc-webhooks}:board:id'],
      ['call', 'WAIT', 2, 1235],
    ]);
  });

  it('waits at least 1 ms (WAIT 0 would block for ever)', async () => {
    const { client, sent } = cluster([null, 1]);
    await replicasHold(client, 'k', 1, -50);
    expect(sent[1]).toEqual(['call', 'WAIT', 1, 1]);
  });

  it('rejects when fewer replicas acknowledged, when WAIT failed, or when the pipeline answered nothing', async () => {
    await expect(replicasHold(cluster([null, 0]).client, 'k', 1, 100)).rejects.toThrow();
    await expect(replicasHold(cluster([null, 1]).client, 'k', 2, 100)).rejects.toThrow();
    await expect(replicasHold(cluster([new Error('CLUSTERDOWN'), null]).client, 'k', 1, 100)).rejects.toThrow('CLUSTERDOWN');
    await expect(replicasHold(cluster(undefined).client, 'k', 1, 100)).rejects.toThrow();
  });
});

describe("the inbox's packages at setup", () => {
  it('are found where installed', () => {
    expect(() => requireQueuePackages()).not.toThrow();
  });

  it('are bullmq and ioredis, each looked up once', () => {
    const resolve = jest.fn((name: string) => `/node_modules/${name}/index.js`);
    requireQueuePackages(resolve);
    expect(resolve.mock.calls).toEqual([['bullmq'], ['ioredis']]);
  });

  it.each(['bullmq', 'ioredis'])('refuse the setup with a TypeError when %s is missing', (missing) => {
    const resolve = (name: string) => {
      if (name === missing) throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
      return `/node_modules/${name}/index.js`;
    };
    expect(() => requireQueuePackages(resolve)).toThrow(TypeError);
  });
});
