import { keySegment } from '../internal/connections/redis-key';

/**
 * What a delivery's key holds in Redis, and the scripts that change it, shared by the Redis store
 * (ioredis) and the Redis REST store (fetch): both keep the same keys the same way, so receivers of
 * either kind share their claims.
 */
export const DONE_VALUE = 'done';
export const CLAIM_PREFIX = 'claim:';
// Deletes the claim only if it is still ours: a lapsed lease may have passed it to another attempt.
export const RELEASE_SCRIPT = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
// Records the delivery as done unless another attempt holds it now (our lease lapsed and a retry
// claimed it: that attempt commits or releases it itself). A key that is gone (lapsed, or lost in a
// restart) is ours to record: the handlers did succeed.
export const COMMIT_SCRIPT =
  "local v = redis.call('GET', KEYS[1]) if v == false or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end if v == ARGV[2] then return 1 end return 0";
// Renews the lease only while the claim is still ours.
export const EXTEND_SCRIPT = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";

// svc's delivery ids: UUIDs, which the receiver has put in lower case.
const SVC_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The store's key of a delivery id. svc's ids (lower-case UUIDs) are the key after the prefix, as
 * they always were, so that receivers of an earlier version and of this one share their claims
 * during a rolling deploy. Any other id is a key segment after the marker `id:`: no id can name a
 * key of another family (the inbox's queues under `svc-webhooks:board:` and `…:bot:`, board order).
 */
export function redisStoreKey(prefix: string, id: string): string {
  return SVC_ID.test(id) ? prefix + id : `${prefix}id:${keySegment(id)}`;
}
