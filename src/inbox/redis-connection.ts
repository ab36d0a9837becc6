import type { Cluster, Redis } from 'ioredis';
import { createRedisClient } from '../internal/connections/redis-client';
import type { InboxSettings } from './inbox-options';

/** The inbox's client: one server's, or a Redis Cluster's. */
export type InboxClient = Redis | Cluster;

const reconnect = (n: number) => Math.min(n * 100, 2000);

/**
 * An ioredis client for the inbox. BullMQ is given our own client rather than options so that the
 * receivers' connection fails fast (the sender must not wait on an outage: the delivery is refused
 * and retried) and so that closing the inbox closes exactly what it opened.
 */
export function inboxConnection(connection: InboxSettings['connection'], role: 'producer' | 'worker'): InboxClient {
  const target = typeof connection === 'string' ? { url: connection } : { cluster: connection.cluster };
  const client =
    role === 'producer'
      ? createRedisClient(target, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: reconnect })
      : // BullMQ's workers block on Redis and must retry for ever (it requires maxRetriesPerRequest null).
        createRedisClient(target, { maxRetriesPerRequest: null, retryStrategy: reconnect });
  // Failures surface per command (a 503, a retried job); an unheard 'error' event would end the process.
  client.on('error', () => undefined);
  return client;
}

/**
 * Waits until `replicas` replicas of the master that serves `key` hold every write this client made
 * there (Redis WAIT), at most `timeoutMs`; rejects when fewer do. WAIT counts the writes of the
 * connection it is sent on: in a pipeline with `key`, it goes on the connection to that key's master,
 * the one the writes went on.
 */
export async function replicasHold(client: Cluster, key: string, replicas: number, timeoutMs: number): Promise<void> {
  const answers = await client
    .pipeline()
    .exists(key)
    .call('WAIT', replicas, Math.max(1, Math.ceil(timeoutMs)))
    .exec();
  const [error, acknowledged] = answers?.[1] ?? [new Error('no answer to WAIT'), 0];
  if (error) throw error;
  if (Number(acknowledged) < replicas)
    throw new Error(`only ${Number(acknowledged)} of ${replicas} replicas acknowledged the delivery within ${Math.ceil(timeoutMs)} ms`);
}

/**
 * The inbox's optional peer dependencies must be there at setup, not be found missing on the first
 * delivery. `resolve`: how a package is found (a seam for tests).
 */
export function requireQueuePackages(resolve: (name: string) => string = require.resolve): void {
  for (const name of ['bullmq', 'ioredis']) {
    try {
      resolve(name);
    } catch {
      throw new TypeError(`svc-webhooks: the inbox needs the ${name} package: npm install bullmq ioredis`);
    }
  }
}
