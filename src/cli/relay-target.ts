import { DEFAULT_REDIS_PREFIX, redisWhere, type BackendTarget } from '../relay/relay-backend';
import { usageError } from './cli-error';
import type { CliIo } from './cli-io';
import { held } from './read-input';

/** The data directory or Redis, as every relay command names it. */
export function backendTarget(io: CliIo, values: { 'data-dir'?: string; 'redis-url'?: string; 'redis-prefix'?: string }): BackendTarget {
  const redisUrl = values['redis-url'] ?? (values['data-dir'] === undefined ? io.env.REDIS_URL : undefined);
  if (redisUrl !== undefined && redisUrl !== '') {
    if (values['data-dir'] !== undefined) throw usageError('give either --data-dir or --redis-url, not both');
    try {
      redisWhere(redisUrl);
    } catch {
      throw usageError('--redis-url must be a redis:// or rediss:// URL');
    }
    // The password (if any) never shows; the host does, in the relay's banner.
    const { password } = new URL(redisUrl);
    if (password !== '') held(io, decodeURIComponent(password));
    return { redisUrl, prefix: values['redis-prefix'] ?? DEFAULT_REDIS_PREFIX };
  }
  return { dataDir: values['data-dir'] ?? 'relay-data' };
}
