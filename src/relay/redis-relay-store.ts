import type { Redis } from 'ioredis';
import { decodeRecord, encodeRecord, type IncomingDelivery, type StoredDelivery } from './relay-record';
import { sameDeliveryId, sequenceRef, type RelayStore, type Retention } from './relay-store';

/**
 * The relay's store on Redis: `<prefix>seq` counts, `<prefix>log` holds each delivery as a member
 * scored by its sequence number, `<prefix>times` its arrival time, for pruning. A delivery is
 * acknowledged once Redis has answered the MULTI that added it: with `appendfsync always` it is on
 * Redis's disk by then (docs/develop-locally.md says so).
 */
export class RedisRelayStore implements RelayStore {
  readonly description: string;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly retention: Retention,
    where: string,
  ) {
    this.description = `redis ${where} (keys ${prefix}*)`;
  }

  async append(delivery: IncomingDelivery): Promise<StoredDelivery> {
    const seq = await this.redis.incr(`${this.prefix}seq`);
    const record: StoredDelivery = { seq, ...delivery };
    const results = await this.redis
      .multi()
      .zadd(`${this.prefix}log`, seq, encodeRecord(record))
      .zadd(`${this.prefix}times`, delivery.receivedAt, String(seq))
      .exec();
    const failed = results?.find(([err]) => err !== null);
    if (results === null || failed !== undefined) throw new Error('Redis did not store the delivery');
    return record;
  }

  async after(seq: number, limit: number): Promise<StoredDelivery[]> {
    const members = await this.redis.zrangebyscore(`${this.prefix}log`, `(${seq}`, '+inf', 'LIMIT', 0, limit);
    return members.map(decodeRecord).filter((r): r is StoredDelivery => r !== undefined);
  }

  async find(ref: string): Promise<StoredDelivery | undefined> {
    const seq = sequenceRef(ref);
    if (seq !== undefined) {
      const [member] = await this.redis.zrangebyscore(`${this.prefix}log`, seq, seq);
      return member === undefined ? undefined : decodeRecord(member);
    }
    // Replays are rare and the log is bounded: read it newest first, a page at a time.
    const key = `${this.prefix}log`;
    for (let start = 0; ; start += 500) {
      const page = await this.redis.zrevrange(key, start, start + 499);
      if (page.length === 0) return undefined;
      for (const member of page) {
        const record = decodeRecord(member);
        if (record !== undefined && sameDeliveryId(record.id, ref)) return record;
      }
    }
  }

  async lastSeq(): Promise<number> {
    return Number((await this.redis.get(`${this.prefix}seq`)) ?? 0);
  }

  async prune(nowMs: number): Promise<number> {
    const cutoff = nowMs - this.retention.retentionMs;
    const expired = await this.redis.zrangebyscore(`${this.prefix}times`, '-inf', `(${cutoff}`);
    const upTo = expired.reduce((max, s) => Math.max(max, Number(s)), 0);
    let dropped = 0;
    if (upTo > 0) {
      dropped += await this.redis.zremrangebyscore(`${this.prefix}log`, '-inf', upTo);
      await this.redis.zremrangebyscore(`${this.prefix}times`, '-inf', `(${cutoff}`);
    }
    // Beyond the count bound, the oldest go first (their times go with the retention, later).
    const over = (await this.redis.zcard(`${this.prefix}log`)) - this.retention.maxDeliveries;
    if (over > 0) dropped += await this.redis.zremrangebyrank(`${this.prefix}log`, 0, over - 1);
    return dropped;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
