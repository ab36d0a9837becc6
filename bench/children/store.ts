/**
 * The in-memory de-dup store at a million ids: memory per remembered id (the store's own count of
 * its tables, and the heap growth measured after a forced GC), and claim/commit throughput once it
 * is that full. Run with --expose-gc.
 */
import { MemoryStore } from '../../src/dedup/memory-store';
import { DEFAULT_RETENTION_MS } from '../../src/dedup/delivery-store';
import { serveRequests, type Message } from '../ipc';

export interface StoreReport {
  readonly ids: number;
  /** All ids committed within one generation (a burst). */
  readonly burst: Footprint;
  /** Ids committed evenly over the retention window, as a steady flow spreads them over generations. */
  readonly spread: Footprint;
  readonly claimCommitPerSecond: number;
  readonly duplicateClaimPerSecond: number;
  readonly ops: number;
}

export interface Footprint {
  readonly tableBytesPerId: number;
  readonly heapBytesPerId: number;
  readonly generations: number;
}

/** A UUID v4-shaped id from a counter, mixed so that its bits look random, and reproducible. */
function uuid(i: number): string {
  let a = Math.imul(i ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  let b = Math.imul(a ^ (a >>> 13), 0xc2b2ae35) >>> 0;
  let c = Math.imul(b ^ (b >>> 16), 0x27d4eb2f) >>> 0;
  const hex = (n: number) => n.toString(16).padStart(8, '0');
  a = (a ^ i) >>> 0;
  const h = hex(a) + hex(b) + hex(c) + hex(i >>> 0);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function gcNow(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

function fill(store: MemoryStore, from: number, count: number, tick?: () => void): void {
  for (let i = from; i < from + count; i++) {
    tick?.();
    const id = uuid(i);
    const claim = store.claim(id, 60_000);
    if (claim.state === 'claimed') store.commit(id, claim.token);
  }
}

function footprint(ids: number, makeStore: () => MemoryStore, tick?: () => void): Footprint {
  const before = gcNow();
  const store = makeStore();
  fill(store, 0, ids, tick);
  const after = gcNow();
  const stats = store.stats();
  if (stats.ids !== ids) throw new Error(`bench: the store remembers ${stats.ids} ids, expected ${ids}`);
  const result = { tableBytesPerId: stats.bytes / ids, heapBytesPerId: (after - before) / ids, generations: stats.generations };
  store.close();
  return result;
}

function perSecond(ops: number, op: (i: number) => void): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) op(i);
  return ops / (Number(process.hrtime.bigint() - start) / 1e9);
}

function measure(ids: number, ops: number): StoreReport {
  // maxIds above the count measured, so nothing is evicted: memory does not depend on it.
  const burst = footprint(ids, () => new MemoryStore({ maxIds: 2 * ids }));
  let clock = Date.now();
  const step = DEFAULT_RETENTION_MS / ids;
  const spread = footprint(
    ids,
    () => new MemoryStore({ maxIds: 2 * ids, now: () => clock }),
    () => (clock += step),
  );

  const store = new MemoryStore({ maxIds: 2 * ids + 2 * ops });
  fill(store, 0, ids);
  const fresh = Array.from({ length: ops }, (_, i) => uuid(ids + i));
  const seen = Array.from({ length: ops }, (_, i) => uuid((i * 7919) % ids));
  const claimCommitPerSecond = perSecond(ops, (i) => {
    const claim = store.claim(fresh[i]!, 60_000);
    if (claim.state === 'claimed') store.commit(fresh[i]!, claim.token);
  });
  const duplicateClaimPerSecond = perSecond(ops, (i) => {
    if (store.claim(seen[i]!, 60_000).state !== 'done') throw new Error('bench: a remembered id was not found');
  });
  return { ids, burst, spread, claimCommitPerSecond, duplicateClaimPerSecond, ops };
}

serveRequests({
  measure: (message: Message) => measure(message.ids as number, message.ops as number),
});
