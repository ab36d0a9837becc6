import { keySegment } from '../internal/connections/redis-key';
import type { Failure, ParkedDelivery, ParkingLot } from './parking-lot';

/** Sends one Redis command within the store's command timeout (the store's own `command`). */
export type RedisCommand = (...args: [string, ...Array<string | number>]) => Promise<unknown>;

/** What the Redis store gives its parking lot. */
export interface RedisParkingSettings {
  readonly command: RedisCommand;
  readonly prefix: string;
  /** How long a failure record is kept after its last failure (the store's retention). */
  readonly retentionMs: number;
  readonly parkedRetentionMs: number;
  readonly maxParked: number;
}

// Notes one failed attempt, on the delivery's failure hash alone: the first time stays, the attempts
// count up, the last error is replaced and the retention starts again.
export const NOTE_FAILURE_SCRIPT = `redis.call('HSETNX', KEYS[1], 'firstAt', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], 'lastError', ARGV[2])
return redis.call('PEXPIRE', KEYS[1], ARGV[3])`;

// The lot's keys share the hash tag {parked}: on a cluster they are in one slot, so each script
// below is one atomic step. KEYS[1] the index (member: the id's key segment, score: parkedAt),
// KEYS[2] the deadlines (same members, score: when the record expires, by the server's clock).
// First, entries whose record expired leave both sets; `now` is in ms.
const PRUNE = `local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. now)
for _, member in ipairs(expired) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
end
`;

// KEYS[3] the record; ARGV: member, parkedAt, record, retention ms, maxParked. A new id past the
// bound is refused (0); a parked id is replaced, its retention started again.
export const PARK_SCRIPT = `${PRUNE}if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return 0 end
redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[4])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
return 1`;

// ARGV: the records' key prefix, the most to return (-1: all). The records in the index's order;
// an entry whose record is gone (expired, evicted, deleted) leaves the sets.
export const LIST_SCRIPT = `${PRUNE}local want = tonumber(ARGV[2])
local out = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if #out == want then break end
  local record = redis.call('GET', ARGV[1] .. member)
  if record then
    out[#out + 1] = record
  else
    redis.call('ZREM', KEYS[1], member)
    redis.call('ZREM', KEYS[2], member)
  end
end
return out`;

// KEYS[3] the record; ARGV[1] its member. 1 when there was a record.
export const DROP_SCRIPT = `redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('DEL', KEYS[3])`;

/** A parked delivery as its record keeps it: JSON, the body in base64. */
interface StoredDelivery extends Omit<ParkedDelivery, 'body'> {
  readonly body: string;
}

/**
 * The Redis store's parking lot, under the store's prefix. A delivery's failures are a hash at
 * `<prefix>failed:<id>`, kept for the store's retention after the last failure. A parked delivery
 * is a JSON record at `<prefix>{parked}:id:<id>`, kept for `parkedRetentionMs`, listed by the
 * sorted set `<prefix>{parked}` (by parkedAt) and expired from it through `<prefix>{parked}:deadlines`.
 * The id in a key is its key segment (internal/connections/redis-key.ts): no id spells another family's key.
 */
export class RedisParking implements ParkingLot {
  private readonly command: RedisCommand;
  private readonly prefix: string;
  private readonly retentionMs: number;
  private readonly parkedRetentionMs: number;
  private readonly maxParked: number;

  constructor(settings: RedisParkingSettings) {
    this.command = settings.command;
    this.prefix = settings.prefix;
    this.retentionMs = Math.ceil(settings.retentionMs);
    this.parkedRetentionMs = Math.ceil(settings.parkedRetentionMs);
    this.maxParked = settings.maxParked;
  }

  async noteFailure(id: string, at: number, error: string): Promise<void> {
    // JSON keeps any text, lone surrogates included (Redis would get U+FFFD for them).
    await this.command('EVAL', NOTE_FAILURE_SCRIPT, 1, this.failureKey(id), String(at), JSON.stringify(error), this.retentionMs);
  }

  async failure(id: string): Promise<Failure | undefined> {
    const fields = ['firstAt', 'attempts', 'lastError'];
    const [firstAt, attempts, lastError] = (await this.command('HMGET', this.failureKey(id), ...fields)) as [string | null, string | null, string | null];
    if (firstAt === null) return undefined;
    return { firstAt: Number(firstAt), attempts: Number(attempts), lastError: JSON.parse(lastError!) as string };
  }

  async park(parked: ParkedDelivery): Promise<boolean> {
    const member = keySegment(parked.id);
    const record = JSON.stringify({ ...parked, body: Buffer.from(parked.body.buffer, parked.body.byteOffset, parked.body.byteLength).toString('base64') });
    const keys = [this.indexKey(), this.deadlinesKey(), this.recordPrefix() + member];
    return (await this.command('EVAL', PARK_SCRIPT, 3, ...keys, member, parked.parkedAt, record, this.parkedRetentionMs, this.maxParked)) === 1;
  }

  async list(limit?: number): Promise<readonly ParkedDelivery[]> {
    const records = (await this.command('EVAL', LIST_SCRIPT, 2, this.indexKey(), this.deadlinesKey(), this.recordPrefix(), limit ?? -1)) as string[];
    return records.map(fromRecord);
  }

  async get(id: string): Promise<ParkedDelivery | undefined> {
    const record = (await this.command('GET', this.recordPrefix() + keySegment(id))) as string | null;
    return record === null ? undefined : fromRecord(record);
  }

  async drop(id: string): Promise<boolean> {
    const member = keySegment(id);
    return (await this.command('EVAL', DROP_SCRIPT, 3, this.indexKey(), this.deadlinesKey(), this.recordPrefix() + member, member)) === 1;
  }

  private failureKey(id: string): string {
    return `${this.prefix}failed:${keySegment(id)}`;
  }

  private indexKey(): string {
    return `${this.prefix}{parked}`;
  }

  private deadlinesKey(): string {
    return `${this.prefix}{parked}:deadlines`;
  }

  private recordPrefix(): string {
    return `${this.prefix}{parked}:id:`;
  }
}

function fromRecord(record: string): ParkedDelivery {
  const stored = JSON.parse(record) as StoredDelivery;
  return { ...stored, body: new Uint8Array(Buffer.from(stored.body, 'base64')) };
}
