import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { kindOf } from '../checks/option-table';

/** Where a Redis lives: one server, by its URL, or a Redis Cluster, by its seed nodes' URLs. */
export type RedisTarget = { readonly url: string } | { readonly cluster: readonly string[] };

const REDIS_URL = /^rediss?:\/\//;

/**
 * Checks the seed nodes of a Redis Cluster once, at setup: a non-empty list of `redis://host:port`
 * URLs (or all `rediss://`, for TLS) without a database (a cluster has only database 0), whose
 * credentials, if any, are the same in each (every node, found or given, is opened with them).
 */
export function clusterSeeds(value: unknown, name: string): readonly string[] {
  const refuse = (why: string): never => {
    throw new TypeError(`svc-webhooks: \`${name}\` must be a non-empty list of redis:// (or rediss://) URLs of the cluster's nodes; ${why}`);
  };
  if (!Array.isArray(value) || value.length === 0) return refuse(`got ${kindOf(value)}`);
  const seeds = value.map((seed: unknown, i) => {
    if (typeof seed !== 'string' || !REDIS_URL.test(seed)) return refuse(`item ${i} is ${kindOf(seed)} that is not one`);
    let url: URL;
    try {
      url = new URL(seed);
    } catch {
      return refuse(`item ${i} is not a valid URL`);
    }
    if (url.hostname === '') refuse(`item ${i} names no host`);
    if (url.pathname !== '' && url.pathname !== '/' && url.pathname !== '/0') refuse(`item ${i} names a database (a cluster has only database 0)`);
    return url;
  });
  const first = seeds[0]!;
  if (seeds.some((u) => u.protocol !== first.protocol)) refuse('mix no redis:// and rediss:// URLs');
  if (seeds.some((u) => u.username !== first.username || u.password !== first.password)) refuse('give every URL the same credentials (or none)');
  return value as string[];
}

/**
 * An ioredis client for `target` with `options`. For a cluster, the per-node options (timeouts,
 * retries per request) and the seeds' credentials and TLS go to every node the cluster finds;
 * `enableOfflineQueue` and `retryStrategy` apply to the cluster as a whole. ioredis is an optional
 * peer dependency: only the users of a Redis need it installed.
 */
export function createRedisClient(target: RedisTarget, options: RedisOptions): Redis | Cluster {
  const ioredis = require('ioredis') as typeof import('ioredis');
  if ('url' in target) return new ioredis.Redis(target.url, options);
  const urls = target.cluster.map((seed) => new URL(seed));
  const first = urls[0]!;
  const { retryStrategy, enableOfflineQueue, ...perNode } = options;
  const clusterOptions: ClusterOptions = {
    redisOptions: {
      ...perNode,
      ...(first.username === '' ? {} : { username: decodeURIComponent(first.username) }),
      ...(first.password === '' ? {} : { password: decodeURIComponent(first.password) }),
      ...(first.protocol === 'rediss:' ? { tls: {} } : {}),
    },
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(typeof retryStrategy === 'function' ? { clusterRetryStrategy: (times: number) => retryStrategy(times) } : {}),
  };
  return new ioredis.Cluster(
    urls.map((u) => ({ host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port === '' ? 6379 : Number(u.port) })),
    clusterOptions,
  );
}
