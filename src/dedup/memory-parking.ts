import type { Failure, ParkedDelivery, ParkingLot } from './parking-lot';

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
