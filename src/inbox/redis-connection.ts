import type { Redis } from 'ioredis';

/**
 * An ioredis client for the inbox. BullMQ is given our own client rather than options so that the
 * receivers' connection fails fast (the sender must not wait on an outage: the delivery is refused
 * and retried) and so that closing the inbox closes exactly what it opened.
 */
export function inboxConnection(url: string, role: 'producer' | 'worker'): Redis {
  // An optional peer dependency, like BullMQ: only users of the inbox need them installed.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Redis: Client } = require('ioredis') as typeof import('ioredis');
  const client =
    role === 'producer'
      ? new Client(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: (n) => Math.min(n * 100, 2000) })
      : // BullMQ's workers block on Redis and must retry for ever (it requires maxRetriesPerRequest null).
        new Client(url, { maxRetriesPerRequest: null, retryStrategy: (n) => Math.min(n * 100, 2000) });
  // Failures surface per command (a 503, a retried job); an unheard 'error' event would end the process.
  client.on('error', () => undefined);
  return client;
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
