import { randomInt, randomUUID } from 'node:crypto';
import { seededRandom } from '../testing/emulator/random';
import { CliError, usageError } from './cli-error';
import type { CliIo } from './cli-io';
import { printable } from './format';
import { fraction, wholeNumber } from './parse-options';
import type { Delivery, LoadedDelivery } from './load-delivery';
import { describeOutcome } from './outcome-lines';
import { postDelivery, type AttemptOutcome } from './post-delivery';
import { startProgress } from './progress';

/** The most deliveries one `send --count` makes: they go one at a time. */
const MAX_COUNT = 10_000;

/** `send --count`: how many deliveries, in which order, how many sent twice, and the seed that chose. */
export interface Batch {
  readonly count: number;
  readonly shuffle: boolean;
  /** The fraction of the deliveries sent a second time, 0 to 1. */
  readonly duplicates: number;
  readonly seed: number;
}

/**
 * The order of the sends, as indices of the deliveries: each once, then the repeats (a fraction of
 * them, chosen by the seed) in the order of their first send; with `shuffle`, all of them shuffled
 * together, so a repeat may come before its first send.
 */
export function sendOrder({ count, shuffle, duplicates, seed }: Batch): number[] {
  const random = seededRandom(seed);
  const indices = Array.from({ length: count }, (_, i) => i);
  const repeated = random
    .shuffleWithin([...indices], count)
    .slice(0, Math.round(count * duplicates))
    .sort((a, b) => a - b);
  const order = [...indices, ...repeated];
  return shuffle ? random.shuffleWithin(order, order.length) : order;
}

/**
 * `count` deliveries made from one event: each its own id (a UUID, as svc gives every event) and,
 * for a board event with a sequence above 0 (ping's is always 0), the next sequence number, so the
 * receiver can put a shuffled batch back in order.
 */
export function copiesOf(template: LoadedDelivery & { payload: Record<string, unknown> }, count: number): Delivery[] {
  const sequence = template.payload.sequence;
  return Array.from({ length: count }, (_, i) => {
    const payload = structuredClone(template.payload);
    payload.id = randomUUID();
    if (template.webhook === 'board' && typeof sequence === 'number' && sequence > 0) payload.sequence = sequence + i;
    return { webhook: template.webhook, kind: template.kind, id: payload.id as string, body: JSON.stringify(payload) };
  });
}

interface Tally {
  sent: number;
  accepted: number;
  duplicates: number;
  noAnswer: number;
  refused: Map<number, number>;
}

function summary(t: Tally): string {
  const refusedCount = [...t.refused.values()].reduce((a, b) => a + b, 0);
  const byStatus = [...t.refused.entries()].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`);
  const refused = `refused ${refusedCount}${byStatus.length === 0 ? '' : ` (${byStatus.join(', ')})`}`;
  return `sent ${t.sent}: accepted ${t.accepted}, duplicates ${t.duplicates}, ${refused}${t.noAnswer === 0 ? '' : `, no answer ${t.noAnswer}`}`;
}

function count(t: Tally, outcome: AttemptOutcome): void {
  t.sent++;
  if (outcome.duplicate) t.duplicates++;
  else if (outcome.ok) t.accepted++;
  else if (outcome.status === undefined) t.noAnswer++;
  else t.refused.set(outcome.status, (t.refused.get(outcome.status) ?? 0) + 1);
}

/** Where the batch goes and how each send is signed and timed. */
export interface BatchTarget {
  readonly url: string;
  readonly secret: string;
  readonly timeoutMs: number;
}

/**
 * Sends the deliveries in `order`, one at a time, each signed afresh (a repeat too, as svc's retry
 * is), prints a line per send and the summary; fails unless every send got a 2xx.
 */
export async function sendBatch(io: CliIo, deliveries: readonly Delivery[], order: readonly number[], target: BatchTarget): Promise<number> {
  const tally: Tally = { sent: 0, accepted: 0, duplicates: 0, noAnswer: 0, refused: new Map() };
  const seen = new Set<number>();
  for (const index of order) {
    const delivery = deliveries[index]!;
    const again = seen.has(index);
    seen.add(index);
    const stop = startProgress(io, `delivery ${index + 1}: waiting for the receiver`);
    const outcome = await postDelivery(io, { ...target, delivery }).finally(stop);
    count(tally, outcome);
    io.stdout.write(`delivery ${index + 1}${again ? ' again' : ''} (id ${delivery.id}): ${printable(describeOutcome(outcome))}\n`);
  }
  io.stdout.write(`${summary(tally)}\n`);
  const failed = tally.sent - tally.accepted - tally.duplicates;
  if (failed > 0) throw new CliError(`${failed} of ${tally.sent} sends failed: ${summary(tally)}`);
  return 0;
}

/** `--count`, `--shuffle`, `--duplicates` and `--seed` checked; undefined without `--count`. */
export function batchOf(values: { count?: string; shuffle?: boolean; duplicates?: string; seed?: string; id?: string }): Batch | undefined {
  const count = wholeNumber(values.count, '--count', { min: 1, max: MAX_COUNT });
  const duplicates = fraction(values.duplicates, '--duplicates');
  const seed = wholeNumber(values.seed, '--seed', { min: 0, max: 0xffffffff });
  if (count === undefined) {
    const needsCount = values.shuffle ? '--shuffle' : duplicates !== undefined ? '--duplicates' : seed !== undefined ? '--seed' : undefined;
    if (needsCount !== undefined) throw usageError(`${needsCount} works on a batch of deliveries; use it with --count`);
    return undefined;
  }
  if (values.id !== undefined) throw usageError("--id fixes one delivery's id, and --count gives each delivery its own: use one of them");
  if (seed !== undefined && !values.shuffle && duplicates === undefined)
    throw usageError('--seed chooses the shuffle and the repeats; use it with --shuffle or --duplicates');
  // A seed is drawn when none is given, and printed, so a run that found a bug can be repeated.
  return { count, shuffle: values.shuffle === true, duplicates: duplicates ?? 0, seed: seed ?? randomInt(0, 0x100000000) };
}

/** The batch's line before the sends: what, how many, in which order, with which seed. */
export function describeBatch(delivery: Delivery, batch: Batch): string {
  const repeats = Math.round(batch.count * batch.duplicates);
  const parts = [
    `${batch.count} ${delivery.webhook}${delivery.kind === undefined ? '' : ` ${delivery.kind}`} deliveries`,
    batch.shuffle ? 'shuffled' : 'in order',
    ...(repeats > 0 ? [`${repeats} sent again`] : []),
    ...(batch.shuffle || repeats > 0 ? [`seed ${batch.seed}`] : []),
  ];
  return parts.join(', ');
}
