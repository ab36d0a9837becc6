import type { WebhookLogger } from '../internal/logging/logger';
import { readOptions } from '../internal/checks/option-table';
import type { ClaimResult, DeliveryStore } from './delivery-store';
import { MEMORY_STORE_OPTIONS } from './store-options';
import { IdTable, idWords } from './id-table';
import type { Failure, ParkedDelivery, ParkingLot } from './parking-lot';

/** Options of `memoryStore(options)`; docs/options.md lists them with their bounds. */
export interface MemoryStoreOptions {
  /** How long a handled id is remembered, in ms. Default: one day plus an hour (the sender's retry window plus margin). */
  retentionMs?: number;
  /** The most ids remembered at once; past it the oldest are forgotten early (and a warning is logged). Default 1,000,000. */
  maxIds?: number;
  /** Clock in ms since the epoch. Default `Date.now`. */
  now?: () => number;
  /** Where eviction warnings go. */
  logger?: Pick<WebhookLogger, 'warn'>;
  /** How long a parked delivery is kept for a replay, in ms. Default 7 days. */
  parkedRetentionMs?: number;
  /** The most deliveries parked at once. Default 10,000. */
  maxParked?: number;
}

/** What the memory store holds now (`store.stats()`). */
export interface MemoryStoreStats {
  /** Ids remembered as done. */
  ids: number;
  /** Claims held by running handlers. */
  claims: number;
  /** Bytes of the id tables (claims are few and short-lived and not counted). */
  bytes: number;
  generations: number;
}

interface Generation {
  readonly table: IdTable;
  /** When it stops taking ids (a span after its start, or earlier when full): its newest id is no younger. */
  endedAt: number;
  /** When its newest id was added. */
  newestAt: number;
}

interface Claim {
  readonly token: string;
  readonly expiresAt: number;
}

const DONE: ClaimResult = Object.freeze({ state: 'done' });
const BUSY: ClaimResult = Object.freeze({ state: 'busy' });
// A generation spans a quarter of the retention: ids are kept between 1 and 1.25 retention windows.
const GENERATIONS_PER_WINDOW = 4;
// A generation holds at most an eighth of `maxIds`: at the bound, the oldest eighth is forgotten.
const GENERATIONS_PER_BOUND = 8;

/**
 * The default de-dup store, for one process. Done ids are kept in generations of compact hash
 * tables (about 16 to 43 bytes an id); a whole generation is dropped once its newest id is older
 * than the retention. A generation also ends when it holds an eighth of `maxIds`, so that at the
 * bound the oldest ids are forgotten first, an eighth at a time, and never the newest ones.
 */
export class MemoryStore implements DeliveryStore {
  readonly retentionMs: number;
  /** Failures and parked deliveries, in the process: a restart forgets them, as it forgets the ids. */
  readonly parking: ParkingLot;
  private readonly spanMs: number;
  private readonly maxIds: number;
  private readonly generationCap: number;
  private readonly now: () => number;
  private readonly logger: Pick<WebhookLogger, 'warn'> | undefined;
  private readonly generations: Generation[] = [];
  private readonly claims = new Map<string, Claim>();
  private readonly words = new Uint32Array(4);
  private ids = 0;
  private lastToken = 0;
  private nextClaimSweep = 0;

  constructor(options: MemoryStoreOptions = {}) {
    const read = readOptions(MEMORY_STORE_OPTIONS, options, { factory: 'memoryStore' });
    this.retentionMs = read.retentionMs;
    this.maxIds = read.maxIds;
    this.spanMs = this.retentionMs / GENERATIONS_PER_WINDOW;
    this.generationCap = Math.max(1, Math.ceil(this.maxIds / GENERATIONS_PER_BOUND));
    this.now = read.now ?? Date.now;
    this.logger = read.logger;
    this.parking = new MemoryParkingLot({
      failureRetentionMs: this.retentionMs,
      parkedRetentionMs: read.parkedRetentionMs,
      maxParked: read.maxParked,
      maxFailures: this.maxIds,
      now: this.now,
    });
  }

  claim(id: string, leaseMs: number): ClaimResult {
    const now = this.now();
    this.expire(now);
    if (now >= this.nextClaimSweep) this.sweepClaims(now);
    if (this.remembered(id)) return DONE;
    const held = this.claims.get(id);
    if (held !== undefined && held.expiresAt > now) return BUSY;
    const token = String(++this.lastToken);
    this.claims.set(id, { token, expiresAt: now + leaseMs });
    return { state: 'claimed', token };
  }

  commit(id: string, token: string): void {
    // Done even if the lease lapsed meanwhile: the handlers did succeed.
    this.forgetClaim(id, token);
    if (this.remembered(id)) return;
    const now = this.now();
    const generation = this.current(now);
    generation.table.add(this.words);
    generation.newestAt = now;
    this.ids++;
    // The current generation holds at most an eighth of the bound, so it is never the one dropped.
    while (this.ids > this.maxIds && this.generations.length > 1) this.evictOldest(now);
  }

  release(id: string, token: string): void {
    this.forgetClaim(id, token);
  }

  extend(id: string, token: string, leaseMs: number): void {
    if (this.claims.get(id)?.token === token) this.claims.set(id, { token, expiresAt: this.now() + leaseMs });
  }

  stats(): MemoryStoreStats {
    let bytes = 0;
    for (const g of this.generations) bytes += g.table.bytes;
    return { ids: this.ids, claims: this.claims.size, bytes, generations: this.generations.length };
  }

  close(): void {
    this.generations.length = 0;
    this.claims.clear();
    this.ids = 0;
  }

  /** Leaves the id's words in `this.words` for a following add. */
  private remembered(id: string): boolean {
    idWords(id, this.words);
    for (const g of this.generations) if (g.table.has(this.words)) return true;
    return false;
  }

  private forgetClaim(id: string, token: string): void {
    if (this.claims.get(id)?.token === token) this.claims.delete(id);
  }

  private current(now: number): Generation {
    const last = this.generations[this.generations.length - 1];
    return last !== undefined && now < last.endedAt && last.table.size < this.generationCap ? last : this.rotate(now);
  }

  private rotate(now: number): Generation {
    const last = this.generations[this.generations.length - 1];
    if (last !== undefined && last.endedAt > now) last.endedAt = now;
    const next: Generation = { table: new IdTable(), endedAt: now + this.spanMs, newestAt: now };
    this.generations.push(next);
    return next;
  }

  // Claims whose holder never settled (a lapsed lease) are dropped now and then, not only on reuse.
  private sweepClaims(now: number): void {
    for (const [id, claim] of this.claims) if (claim.expiresAt <= now) this.claims.delete(id);
    this.nextClaimSweep = now + 60_000;
  }

  private expire(now: number): void {
    while (this.generations.length > 0 && now - this.generations[0]!.endedAt >= this.retentionMs) {
      this.ids -= this.generations.shift()!.table.size;
    }
  }

  private evictOldest(now: number): void {
    const oldest = this.generations.shift()!;
    this.ids -= oldest.table.size;
    // The newest id forgotten now: retries of ids older than this would run again.
    const rememberedMs = Math.max(0, now - oldest.newestAt);
    if (rememberedMs < this.retentionMs) {
      this.logger?.warn(
        { evicted: oldest.table.size, rememberedMs, retentionMs: this.retentionMs, windowCutMs: this.retentionMs - rememberedMs, maxIds: this.maxIds },
        `de-dup store is full (maxIds ${this.maxIds}): forgot the oldest ${oldest.table.size} ids; ids are now remembered for ${minutes(rememberedMs)} of the ${minutes(this.retentionMs)} retry window, so a retry of an older delivery would run its handlers again; raise maxIds or use a shared store`,
      );
    }
  }
}

function minutes(ms: number): string {
  return ms >= 3_600_000 ? `${(ms / 3_600_000).toFixed(1)} h` : ms >= 60_000 ? `${(ms / 60_000).toFixed(1)} min` : `${(ms / 1000).toFixed(1)} s`;
}

/** The in-memory de-dup store (the default). */
export function memoryStore(options?: MemoryStoreOptions): MemoryStore {
  return new MemoryStore(options);
}

interface Kept<T> {
  readonly value: T;
  readonly until: number;
}

/** What the memory lot is bounded by, and its clock. */
export interface MemoryParkingTerms {
  /** How long a failure is remembered: the store's retention (svc's delivery life and more). */
  readonly failureRetentionMs: number;
  readonly parkedRetentionMs: number;
  readonly maxParked: number;
  /** The most failures remembered at once; past it the oldest noted are forgotten first. */
  readonly maxFailures: number;
  readonly now: () => number;
}

/**
 * The memory store's parking lot: failures and parked deliveries in the process, gone with it (as
 * the store's ids are). Maps keep insertion order, so the oldest entry is the first one.
 */
export class MemoryParkingLot implements ParkingLot {
  private readonly failures = new Map<string, Kept<Failure>>();
  private readonly parked = new Map<string, Kept<ParkedDelivery>>();

  constructor(private readonly terms: MemoryParkingTerms) {}

  noteFailure(id: string, at: number, error: string): void {
    const known = this.failure(id);
    this.failures.delete(id);
    const failure = { firstAt: known === undefined ? at : Math.min(known.firstAt, at), attempts: (known?.attempts ?? 0) + 1, lastError: error };
    this.failures.set(id, { value: failure, until: this.terms.now() + this.terms.failureRetentionMs });
    for (const oldest of this.failures.keys()) {
      if (this.failures.size <= this.terms.maxFailures) break;
      this.failures.delete(oldest);
    }
  }

  failure(id: string): Failure | undefined {
    return this.live(this.failures, id);
  }

  park(parked: ParkedDelivery): boolean {
    const replacing = this.get(parked.id) !== undefined;
    if (!replacing) {
      this.sweep();
      if (this.parked.size >= this.terms.maxParked) return false;
    }
    this.parked.set(parked.id, { value: parked, until: this.terms.now() + this.terms.parkedRetentionMs });
    return true;
  }

  list(limit = Number.POSITIVE_INFINITY): ParkedDelivery[] {
    this.sweep();
    return [...this.parked.values()]
      .map((kept) => kept.value)
      .sort((a, b) => a.parkedAt - b.parkedAt)
      .slice(0, limit);
  }

  get(id: string): ParkedDelivery | undefined {
    return this.live(this.parked, id);
  }

  drop(id: string): boolean {
    return this.get(id) !== undefined && this.parked.delete(id);
  }

  private live<T>(map: Map<string, Kept<T>>, id: string): T | undefined {
    const kept = map.get(id);
    if (kept === undefined) return undefined;
    if (kept.until > this.terms.now()) return kept.value;
    map.delete(id);
    return undefined;
  }

  private sweep(): void {
    const now = this.terms.now();
    for (const [id, kept] of this.parked) if (kept.until <= now) this.parked.delete(id);
  }
}
