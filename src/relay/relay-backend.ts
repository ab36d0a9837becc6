import type { Redis } from 'ioredis';
import { FileStore, type LoadReport } from './file-store';
import { RedisRelayStore } from './redis-relay-store';
import type { RelayStore, Retention } from './relay-store';
import { fileTokens, redisTokens, type TokenBackend } from './relay-tokens';

/**
 * Where a relay keeps its deliveries and tokens: a data directory (the default, no other server) or
 * Redis. The `relay token` commands and the relay itself open the same one.
 */
export type BackendTarget = { readonly dataDir: string } | { readonly redisUrl: string; readonly prefix: string };

export const DEFAULT_REDIS_PREFIX = 'svc-webhooks:relay:';

/** redis://host:port/db without credentials, for messages. */
export function redisWhere(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new Error('not a redis:// or rediss:// URL');
  return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
}

/**
 * Connects once. A store must fail fast rather than queue: with no offline queue and one try per
 * command, a delivery that cannot be stored is answered 503 within seconds, not after svc gave up.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const where = redisWhere(url);
  const { Redis: Client } = require('ioredis') as typeof import('ioredis');
  const client = new Client(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    commandTimeout: 3000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw new Error(`cannot reach Redis at ${where} (${err instanceof Error ? err.message : String(err)})`);
  }
  return client;
}

export async function openTokens(target: BackendTarget): Promise<{ tokens: TokenBackend; close: () => Promise<void> }> {
  if ('dataDir' in target) return { tokens: fileTokens(target.dataDir), close: () => Promise.resolve() };
  const redis = await connectRedis(target.redisUrl);
  return {
    tokens: redisTokens(redis, target.prefix),
    close: () =>
      redis.quit().then(
        () => undefined,
        () => redis.disconnect(),
      ),
  };
}

export interface OpenedStore {
  readonly store: RelayStore;
  readonly tokens: TokenBackend;
  /** The file store's findings at start; undefined for Redis. */
  readonly report: LoadReport | undefined;
}

export async function openStore(target: BackendTarget, retention: Retention, nowMs: number): Promise<OpenedStore> {
  if ('dataDir' in target) {
    const { store, report } = await FileStore.open(target.dataDir, retention, nowMs);
    return { store, tokens: fileTokens(target.dataDir), report };
  }
  const redis = await connectRedis(target.redisUrl);
  return {
    store: new RedisRelayStore(redis, target.prefix, retention, redisWhere(target.redisUrl)),
    tokens: redisTokens(redis, target.prefix),
    report: undefined,
  };
}

/** The file store's findings, said at start: what was kept, what was dropped and why. */
export function describeLoad(report: LoadReport): string[] {
  const lines = [`data file: kept ${report.kept} deliver${report.kept === 1 ? 'y' : 'ies'}`];
  if (report.tornTail) lines.push('data file: dropped a torn last line (a write cut short by a crash; svc was not answered 2xx for it and retries it)');
  if (report.corruptLines.length > 0) {
    const shown = report.corruptLines.slice(0, 10).join(', ');
    const more = report.corruptLines.length > 10 ? ` and ${report.corruptLines.length - 10} more` : '';
    lines.push(
      `data file: skipped ${report.corruptLines.length} corrupt line${report.corruptLines.length === 1 ? '' : 's'} (line ${shown}${more}); the original is kept as ${report.setAside ?? 'is'}`,
    );
  }
  return lines;
}
