/** The part of a Durable Object's storage the object uses. */
export interface DedupObjectStorage {
  get<T>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  delete(key: string): Promise<boolean>;
  list<T>(options: { startAfter?: string; limit: number }): Promise<Map<string, T>>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
}

/** The part of a Durable Object's state the object uses. */
export interface DedupObjectState {
  readonly storage: DedupObjectStorage;
}

/** One delivery id's record: `claim:<token>` while claimed, `done` once committed; `until` in ms since the epoch. */
interface DeliveryRecord {
  readonly v: string;
  readonly until: number;
}

/** A request of the store to the object, as JSON. */
export type DedupCommand =
  | { readonly op: 'claim'; readonly id: string; readonly token: string; readonly ms: number }
  | { readonly op: 'commit'; readonly id: string; readonly token: string; readonly ms: number }
  | { readonly op: 'extend'; readonly id: string; readonly token: string; readonly ms: number }
  | { readonly op: 'release'; readonly id: string; readonly token: string };

/** The object's answer to a claim: the claim is ours, or the record it found. */
export type DedupClaimAnswer = { readonly state: 'claimed' | 'done' | 'busy' };

export const DONE_RECORD = 'done';
const CLAIM_PREFIX = 'claim:';
/** Records read per step of the alarm's sweep: an alarm's run stays short however many are kept. */
const SWEEP_BATCH = 500;
/**
 * The least time between two sweeps. Each reads every record of the object, and an expired record
 * counts as absent before it is deleted, so sweeping at each record's expiry would buy nothing.
 */
export const SWEEP_INTERVAL_MS = 60 * 60 * 1000;
/** A delivery id longer than this is refused (svc's are UUIDs); storage keys may be up to 2 KiB. */
const MAX_ID_LENGTH = 512;

/**
 * The Durable Object that keeps delivery ids for `durableObjectStore()`: the class a Worker exports
 * and names in `wrangler.toml`. An object runs one event at a time and its storage is strongly
 * consistent, and no other I/O happens between a claim's read and its write, so a claim is atomic
 * as the Redis store's SET NX is. Records are those of the Redis store: a claim with its token until
 * its lease ends, `done` until the retention ends; an expired record counts as absent, and the
 * object's alarm deletes expired records, at most once an hour, so that storage does not grow.
 *
 * It takes the Workers runtime's shapes structurally (no import of `cloudflare:workers`), so the
 * Fetch build loads anywhere; a Worker exports it as is: `export { SvcDedupObject } from 'svc-webhooks'`.
 */
export class SvcDedupObject {
  private readonly storage: DedupObjectStorage;

  constructor(state: DedupObjectState, _env?: unknown) {
    this.storage = state.storage;
  }

  /** One store command per request (POST, JSON); anything else is 400 and changes nothing. */
  async fetch(request: Request): Promise<Response> {
    let command: DedupCommand;
    try {
      command = commandOf(await request.json());
    } catch (err) {
      return Response.json({ error: (err as Error).message }, { status: 400 });
    }
    return Response.json(await this.run(command));
  }

  /**
   * Deletes the records that expired, a batch at a time, and sets the alarm for the next to expire,
   * or an interval from now when that is sooner.
   */
  async alarm(): Promise<void> {
    const now = Date.now();
    let next = Infinity;
    let startAfter: string | undefined;
    for (;;) {
      const batch = await this.storage.list<DeliveryRecord>(startAfter === undefined ? { limit: SWEEP_BATCH } : { startAfter, limit: SWEEP_BATCH });
      for (const [key, record] of batch) {
        if (record.until <= now) await this.storage.delete(key);
        else next = Math.min(next, record.until);
        startAfter = key;
      }
      if (batch.size < SWEEP_BATCH) break;
    }
    if (next !== Infinity) await this.storage.setAlarm(Math.max(next, now + SWEEP_INTERVAL_MS));
  }

  private async run(command: DedupCommand): Promise<DedupClaimAnswer | { readonly ok: boolean }> {
    const now = Date.now();
    const found = await this.storage.get<DeliveryRecord>(command.id);
    const current = found !== undefined && found.until > now ? found.v : undefined;
    const ours = CLAIM_PREFIX + command.token;
    switch (command.op) {
      case 'claim':
        if (current !== undefined) return { state: current === DONE_RECORD ? 'done' : 'busy' };
        await this.keep(command.id, { v: ours, until: now + command.ms });
        return { state: 'claimed' };
      case 'commit':
        // As the Redis store: done unless another attempt holds it now (our lease lapsed and a retry
        // claimed it); a record that is gone is ours to write, for the handlers did succeed.
        if (current !== undefined && current !== ours && current !== DONE_RECORD) return { ok: false };
        if (current !== DONE_RECORD) await this.keep(command.id, { v: DONE_RECORD, until: now + command.ms });
        return { ok: true };
      case 'extend':
        if (current !== ours) return { ok: false };
        await this.keep(command.id, { v: ours, until: now + command.ms });
        return { ok: true };
      case 'release':
        if (current !== ours) return { ok: false };
        await this.storage.delete(command.id);
        return { ok: true };
    }
  }

  private async keep(id: string, record: DeliveryRecord): Promise<void> {
    await this.storage.put(id, record);
    // A sweep is due already when an alarm is set: it sets the next one itself.
    if ((await this.storage.getAlarm()) === null) await this.storage.setAlarm(record.until);
  }
}

/** The command in a request's JSON, checked: an object runs only what the store sends. */
function commandOf(body: unknown): DedupCommand {
  const c = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (c.op !== 'claim' && c.op !== 'commit' && c.op !== 'extend' && c.op !== 'release') throw new Error('unknown op');
  if (typeof c.id !== 'string' || c.id === '' || c.id.length > MAX_ID_LENGTH) throw new Error('id must be a string of 1 to 512 characters');
  if (typeof c.token !== 'string' || c.token === '') throw new Error('token must be a non-empty string');
  if (c.op !== 'release' && !(typeof c.ms === 'number' && c.ms > 0 && Number.isFinite(c.ms))) throw new Error('ms must be a positive number');
  return c as unknown as DedupCommand;
}
