import { FakeSvcError } from './emulator-error';
import type { DeliveryStatus, QueuedDelivery } from './webhook-record';

/** One POST the emulator sent, and what it got. */
export interface AuditAttempt {
  readonly deliveryId: string;
  readonly kind: 'board' | 'bot';
  /** The board id or the bot id. */
  readonly ownerId: string;
  readonly eventType: string;
  readonly sequence: number | null;
  /** 1 for the first attempt, 2 for the first retry, …; a chaos copy carries its attempt's number. */
  readonly attempt: number;
  /** `original`, a `duplicate` sent after a 2xx, a `concurrent` second copy, or a `ping`. */
  readonly copy: 'original' | 'duplicate' | 'concurrent' | 'ping';
  /** When it was sent, on the emulator's clock (ms since the epoch). */
  readonly at: number;
  readonly ok: boolean;
  readonly status: number | null;
  readonly error: string | null;
}

/** One event queued for a webhook and where it ended. */
export interface AuditDelivery {
  readonly id: string;
  readonly kind: 'board' | 'bot';
  readonly ownerId: string;
  readonly eventType: string;
  readonly sequence: number | null;
  readonly status: DeliveryStatus;
  readonly attempts: number;
}

/** What the emulator sent and what it was answered, with the assertions a test makes on them. */
export interface Audit {
  /** Every delivery queued so far (the latest `maxAuditEntries`), in the order they were queued. */
  deliveries(): AuditDelivery[];
  /** Every POST sent so far (the latest `maxAuditEntries`; pings and chaos copies included), in the order sent. */
  attempts(): AuditAttempt[];
  /** Throws `audit_failed` unless every delivery queued was answered 2xx. */
  assertAllDelivered(): void;
  /**
   * Throws `audit_failed` when a delivery id appears twice in `handledIds` (the receiver's own
   * record of what its handler ran for), or when an id was never sent by this emulator.
   */
  assertNoneHandledTwice(handledIds: Iterable<string>): void;
  /**
   * Throws `audit_failed` unless `handledSequences` (one board's `sequence` values in the order its
   * handler ran them) only ever increase.
   */
  assertBoardOrder(handledSequences: readonly number[]): void;
}

const MAX_LISTED = 5;

function fail(what: string, items: readonly string[]): never {
  const listed = items.slice(0, MAX_LISTED).join('; ');
  const more = items.length > MAX_LISTED ? ` (and ${items.length - MAX_LISTED} more)` : '';
  throw new FakeSvcError('audit_failed', `${what}: ${listed}${more}`);
}

/**
 * The audit of one emulator: it reads the deliveries it was given and keeps their attempts, the
 * latest `maxEntries` of each, so a long-running emulator's memory stays bounded.
 */
export class DeliveryAudit implements Audit {
  readonly #deliveries: QueuedDelivery[] = [];
  readonly #attempts: AuditAttempt[] = [];
  readonly #maxEntries: number;

  /** `maxEntries`: how many deliveries, and how many attempts, are kept (the oldest go first). */
  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** Keeps `delivery` (it is read live, so its later status shows). */
  track(delivery: QueuedDelivery): void {
    this.#deliveries.push(delivery);
    if (this.#deliveries.length > this.#maxEntries) this.#deliveries.splice(0, this.#deliveries.length - this.#maxEntries);
  }

  /** Keeps one attempt. */
  record(attempt: AuditAttempt): void {
    this.#attempts.push(attempt);
    if (this.#attempts.length > this.#maxEntries) this.#attempts.splice(0, this.#attempts.length - this.#maxEntries);
  }

  deliveries(): AuditDelivery[] {
    return this.#deliveries.map(({ id, kind, ownerId, eventType, sequence, status, attempts }) => ({
      id,
      kind,
      ownerId,
      eventType,
      sequence,
      status,
      attempts,
    }));
  }

  attempts(): AuditAttempt[] {
    return [...this.#attempts];
  }

  assertAllDelivered(): void {
    const missing = this.#deliveries
      .filter((d) => d.status !== 'delivered')
      .map((d) => `${d.id} (${d.eventType}) is ${d.status} after ${d.attempts} attempt(s)`);
    if (missing.length > 0) fail(`${missing.length} of ${this.#deliveries.length} deliveries were not answered 2xx`, missing);
  }

  assertNoneHandledTwice(handledIds: Iterable<string>): void {
    const sent = new Set(this.#attempts.map((a) => a.deliveryId));
    const seen = new Map<string, number>();
    for (const id of handledIds) seen.set(id, (seen.get(id) ?? 0) + 1);
    const twice = [...seen].filter(([, n]) => n > 1).map(([id, n]) => `${id} handled ${n} times`);
    if (twice.length > 0) fail(`${twice.length} deliveries were handled more than once`, twice);
    const unknown = [...seen.keys()].filter((id) => !sent.has(id)).map((id) => `${id} was never sent`);
    if (unknown.length > 0) fail(`${unknown.length} handled ids were never sent by this emulator`, unknown);
  }

  assertBoardOrder(handledSequences: readonly number[]): void {
    const breaks: string[] = [];
    for (let i = 1; i < handledSequences.length; i++) {
      const [before, after] = [handledSequences[i - 1]!, handledSequences[i]!];
      if (!(after > before)) breaks.push(`sequence ${after} handled after ${before} (position ${i})`);
    }
    if (breaks.length > 0) fail('the board order was broken', breaks);
  }
}
