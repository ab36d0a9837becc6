/**
 * Where the inbox's time to 2xx goes (`npx tsx bench/inbox.ts --latency --phases`): the receiver
 * child marks, per delivery, the start and end of its claim in the de-dup store and of its enqueue
 * (BullMQ's add), and records its GC pauses; the sender marks when it sent each delivery and when
 * the answer came. Both use the machine's clock (performance.timeOrigin + now()), so the marks
 * of one delivery line up across the processes. Measuring costs a little: the figures of a traced
 * run are a little slower than those of an untraced one.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import type { DeliveryStore } from '../src';
import { percentile } from './inbox-traffic';

/** The marks of one delivery in the receiver, ms on the machine's clock. */
export interface ReceiverMarks {
  claimStart?: number;
  claimEnd?: number;
  addStart?: number;
  addEnd?: number;
}

export interface ReceiverPhases {
  readonly marks: Record<string, ReceiverMarks>;
  /** GC pauses: start (machine's clock) and duration, ms. */
  readonly gcs: Array<readonly [number, number]>;
}

/** What the sender saw of one delivery: its id, when it was sent (machine's clock) and the ms to its answer. */
export interface SentMark {
  readonly id: string;
  readonly at: number;
  readonly ms: number;
}

const clock = () => performance.timeOrigin + performance.now();

/** Records this process's GC pauses, [start on the machine's clock, duration] in ms, until `stop()`. */
export function recordGcPauses(): { readonly pauses: Array<readonly [number, number]>; stop(): void } {
  const pauses: Array<readonly [number, number]> = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push([performance.timeOrigin + entry.startTime, entry.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  return { pauses, stop: () => observer.disconnect() };
}

/**
 * In the receiver child: marks the store's claims and BullMQ's adds (by patching the Queue class
 * the inbox loads) and records GC pauses. Returns the record, filled in as deliveries arrive.
 */
export function traceReceiver(store: DeliveryStore): ReceiverPhases {
  const phases: ReceiverPhases = { marks: {}, gcs: recordGcPauses().pauses };
  const marksOf = (id: string) => (phases.marks[id] ??= {});
  const claim = store.claim.bind(store);
  store.claim = async (id, leaseMs) => {
    const marks = marksOf(id);
    marks.claimStart = clock();
    const result = await claim(id, leaseMs);
    marks.claimEnd = clock();
    return result;
  };
  const { Queue } = require('bullmq') as typeof import('bullmq');
  const add = Queue.prototype.add;
  Queue.prototype.add = async function (this: InstanceType<typeof Queue>, ...args: Parameters<typeof add>) {
    const marks = marksOf((args[1] as { deliveryId: string }).deliveryId);
    marks.addStart = clock();
    const job = await add.apply(this, args);
    marks.addEnd = clock();
    return job;
  } as typeof add;
  return phases;
}

/** In the sender: the mark of a delivery sent at `started` (performance.now()) and answered after `ms`. */
export function sentMark(id: string, started: number, ms: number): SentMark {
  return { id, at: performance.timeOrigin + started, ms };
}

const PHASES = ['before the claim', 'claim', 'between', 'enqueue', 'after the enqueue'] as const;

/**
 * The breakdown, as lines: per phase its p50 and p99 over all deliveries and its mean over the
 * slowest 1 % (the deliveries beyond the p99), and how many of those a GC pause overlapped.
 */
export function describePhases(sent: readonly SentMark[], receiver: ReceiverPhases): string[] {
  const rows = sent.flatMap((s) => {
    const m = receiver.marks[s.id];
    if (m?.claimStart === undefined || m.claimEnd === undefined || m.addStart === undefined || m.addEnd === undefined) return [];
    const end = s.at + s.ms;
    const parts = [m.claimStart - s.at, m.claimEnd - m.claimStart, m.addStart - m.claimEnd, m.addEnd - m.addStart, end - m.addEnd];
    const paused = receiver.gcs.some(([start, duration]) => start < end && start + duration > s.at);
    return [{ ms: s.ms, parts, paused }];
  });
  const slow = [...rows].sort((a, b) => b.ms - a.ms).slice(0, Math.max(1, Math.ceil(rows.length / 100)));
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const pauses = receiver.gcs.map(([, d]) => d);
  return [
    `${rows.length} deliveries, ms: p50 and p99 over all, and the mean over the slowest ${slow.length}:`,
    ...PHASES.map((name, i) => {
      const values = rows.map((r) => r.parts[i]!);
      return `  ${name} p50 ${percentile(values, 50).toFixed(2)}, p99 ${percentile(values, 99).toFixed(2)}, slowest ${mean(slow.map((r) => r.parts[i]!)).toFixed(2)}`;
    }),
    `  ${slow.filter((r) => r.paused).length} of the slowest ${slow.length} overlapped a GC pause of the receiver (its ${pauses.length} pauses: p50 ${percentile(pauses, 50).toFixed(2)} ms, max ${Math.max(0, ...pauses).toFixed(2)} ms)`,
  ];
}
