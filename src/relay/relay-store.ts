import type { IncomingDelivery, StoredDelivery } from './relay-record';

/**
 * Where the relay keeps verified deliveries for its retention: a file under a data directory
 * (`file-store.ts`) or Redis (`redis-relay-store.ts`). `append` resolves only once the delivery is
 * durable; the relay answers svc 2xx after it, never before.
 */
export interface RelayStore {
  /** How the relay describes it at start: "file relay-data/deliveries.jsonl". */
  readonly description: string;
  /** Stores the delivery with the next sequence number; rejects when it could not be made durable. */
  append(delivery: IncomingDelivery): Promise<StoredDelivery>;
  /** Up to `limit` deliveries with a sequence number above `seq`, oldest first. */
  after(seq: number, limit: number): Promise<StoredDelivery[]>;
  /** A stored delivery by its delivery id or its sequence number. */
  find(ref: string): Promise<StoredDelivery | undefined>;
  /** The highest sequence number given so far (0 when none). */
  lastSeq(): Promise<number>;
  /** Drops what is older than the retention or beyond the count bound; resolves to how many. */
  prune(nowMs: number): Promise<number>;
  close(): Promise<void>;
}

/** How long and how much a store keeps. */
export interface Retention {
  readonly retentionMs: number;
  /** Deliveries kept at most; the oldest go first. */
  readonly maxDeliveries: number;
}

/** Whether `ref` names a sequence number (digits) rather than a delivery id. */
export function sequenceRef(ref: string): number | undefined {
  return /^\d{1,15}$/.test(ref) ? Number(ref) : undefined;
}

/** Delivery ids are compared as receivers compare them: a UUID in any case is one id. */
export function sameDeliveryId(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
