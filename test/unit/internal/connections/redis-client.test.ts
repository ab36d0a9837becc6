import { clusterSeeds, createRedisClient } from '../../../../src/internal/connections/redis-client';
import { Cluster, Redis, resetIoredis } from '../../../support/fake-ioredis';

/**
 * The Redis clients the store and the inbox open, against a scripted ioredis: one server's from its
 * URL, a cluster's from its seed nodes; and the seed nodes as setup checks them.
 */
jest.mock('ioredis', () => jest.requireActual('../../../support/fake-ioredis'));

beforeEach(() => resetIoredis());

describe('the seed nodes of a Redis Cluster, at setup', () => {
  it.each([
    ['host and port', ['redis://10.0.0.1:7000']],
    ['no port', ['redis://h']],
    ['database 0, or a bare slash', ['redis://h/0', 'redis://h2/']],
    ['IPv6', ['redis://[::1]:7001']],
    ['TLS and the same credentials in each', ['rediss://app:pw@a:1', 'rediss://app:pw@b:1']],
  ])('takes %s, as given', (_what, seeds) => {
    expect(clusterSeeds(seeds, 'cluster')).toBe(seeds);
  });

  it.each([
    ['not a list', 'redis://h:1'],
    ['an empty list', []],
    ['a number in it', [7000]],
    ['an object that reads as a redis URL', [{ toString: () => 'redis://h:1' }]],
    ['another scheme', ['http://h:1']],
    ['redis:// not at the start', ['x-redis://h:1']],
    ['no host', ['redis://']],
    ['no host, a path', ['redis:///x']],
    ['no valid URL', ['redis://:1']],
    ['a database other than 0', ['redis://h:1/1']],
    ['redis:// and rediss:// mixed', ['redis://a:1', 'rediss://b:1']],
    ['another user in one', ['redis://u:pw@a:1', 'redis://v:pw@b:1']],
    ['another password in one', ['redis://u:pw@a:1', 'redis://u:px@b:1']],
    ['credentials in one only', ['redis://u:pw@a:1', 'redis://b:1']],
  ])('refuses %s with a TypeError', (_what, seeds) => {
    expect(() => clusterSeeds(seeds, 'cluster')).toThrow(TypeError);
  });
});

describe('a Redis client', () => {
  const retryStrategy = (n: number) => n * 7;

  it('for a URL, is an ioredis Redis with the options as given', () => {
    const options = { enableOfflineQueue: false, retryStrategy };
    const client = createRedisClient({ url: 'redis://h:1/2' }, options);
    expect([Redis.made, Cluster.made]).toEqual([[client], []]);
    expect([Redis.made[0]!.url, Redis.made[0]!.options]).toEqual(['redis://h:1/2', options]);
  });

  it("for a cluster, is an ioredis Cluster on the seeds, with the per-node options, the seeds' credentials and TLS on every node", () => {
    const client = createRedisClient(
      { cluster: ['rediss://us%40r:p%3Aw@[::1]:7001', 'rediss://us%40r:p%3Aw@h'] },
      { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 9, retryStrategy },
    );
    expect([Redis.made, Cluster.made]).toEqual([[], [client]]);
    const { nodes, options } = Cluster.made[0]!;
    expect(nodes).toEqual([
      { host: '::1', port: 7001 },
      { host: 'h', port: 6379 },
    ]);
    const { clusterRetryStrategy, ...rest } = options;
    expect(rest).toStrictEqual({
      enableOfflineQueue: false,
      redisOptions: { maxRetriesPerRequest: 0, connectTimeout: 9, username: 'us@r', password: 'p:w', tls: {} },
    });
    expect([1, 3].map(clusterRetryStrategy)).toEqual([7, 21]);
  });

  it('for a cluster without credentials, TLS, offline queue setting or retry strategy, leaves them to ioredis', () => {
    createRedisClient({ cluster: ['redis://h:1'] }, { maxRetriesPerRequest: null });
    expect(Cluster.made[0]!.options).toStrictEqual({ redisOptions: { maxRetriesPerRequest: null } });
  });
});
