import { customOption, kindOf, numberOption } from '../internal/checks/option-table';
import { DAY_MS } from '../internal/delivery/svc-limits';

/**
 * Where deliveries are parked rather than lost. svc retries a failing delivery for a day and then
 * drops it (and disables a webhook that failed all day); an attempt that comes `parkAfterMs` after
 * the delivery first failed is answered 200 and the delivery kept here, for a replay once the
 * handler is fixed. A store that offers a lot keeps its failures and parked deliveries beside its
 * ids: the memory store in the process, Redis under the store's prefix, PostgreSQL in a table.
 */
export interface ParkingLot {
  /**
   * Notes a failed attempt of delivery `id` at `at` (ms since the epoch) with its error's scrubbed
   * message: the first time is kept, the attempts counted, the last error replaced. Kept for the
   * store's retention (svc's delivery life), then forgotten.
   */
  noteFailure(id: string, at: number, error: string): void | Promise<void>;
  /** What the failed attempts of `id` were, if any failed within the retention. */
  failure(id: string): Failure | undefined | Promise<Failure | undefined>;
  /**
   * Keeps a parked delivery (a new one, or one replaced after a replay) for the lot's retention.
   * Answers false, keeping nothing, when the lot already holds `maxParked` others.
   */
  park(parked: ParkedDelivery): boolean | Promise<boolean>;
  /** The parked deliveries, oldest parked first, at most `limit` (default all). */
  list(limit?: number): readonly ParkedDelivery[] | Promise<readonly ParkedDelivery[]>;
  /** One parked delivery. */
  get(id: string): ParkedDelivery | undefined | Promise<ParkedDelivery | undefined>;
  /** Forgets a parked delivery for good; false when there was none. */
  drop(id: string): boolean | Promise<boolean>;
}

/** The failed attempts of one delivery. */
export interface Failure {
  /** When it first failed, in ms since the epoch. */
  readonly firstAt: number;
  /** How many attempts failed. */
  readonly attempts: number;
  /** The last error's message, scrubbed of secrets. */
  readonly lastError: string;
}

/** Why a delivery was parked. */
export type ParkReason = 'failing' | 'schema';

/** A delivery kept instead of lost: everything a replay needs, and why it is here. */
export interface ParkedDelivery {
  /** The delivery id. */
  readonly id: string;
  readonly webhook: 'board' | 'bot';
  /** The event's type (board) or kind (bot); '' when the payload did not say. */
  readonly kind: string;
  /** `failing`: its handlers kept failing until `parkAfterMs`; `schema`: it failed the schema (`schemaPolicy: 'park'`). */
  readonly reason: ParkReason;
  /** When it was parked, in ms since the epoch. */
  readonly parkedAt: number;
  /** When it first failed (absent for a schema violation parked at once). */
  readonly firstFailedAt?: number | undefined;
  /** How many attempts failed, replays included. */
  readonly attempts: number;
  /** The last error's message, scrubbed of secrets. */
  readonly lastError: string;
  /** svc's headers as received, lower-case names, without the signature. */
  readonly headers: Readonly<Record<string, string>>;
  /** The raw body, byte for byte. */
  readonly body: Uint8Array;
  /** When a replay handled it; a later replay is a duplicate. */
  readonly replayedAt?: number | undefined;
}

/** Default `parkedRetentionMs`: a week, time to notice, fix the handler and replay. */
export const DEFAULT_PARKED_RETENTION_MS = 7 * 24 * 3_600_000;
/** Default `maxParked`. */
export const DEFAULT_MAX_PARKED = 10_000;

/** The store options every store with a parking lot takes (docs/options.md is made from them). */
export const PARKING_OPTIONS = {
  parkedRetentionMs: numberOption({
    doc: 'How long a parked delivery is kept for a replay.',
    unit: 'ms',
    default: DEFAULT_PARKED_RETENTION_MS,
    defaultText: `${DEFAULT_PARKED_RETENTION_MS} (7 days)`,
    min: 0,
    minExclusive: true,
    integer: false,
  }),
  maxParked: numberOption({
    doc: 'The most deliveries parked at once; past it a delivery is not parked (its handlers run and svc retries it as before) and an error is logged.',
    unit: 'count',
    default: DEFAULT_MAX_PARKED,
    min: 0,
    minExclusive: true,
    integer: true,
  }),
};

/** Default `parkAfterMs`: 20 hours, before svc drops the delivery (a day) and before it disables the webhook. */
export const DEFAULT_PARK_AFTER_MS = 20 * 3_600_000;

/** The webhook option `parkAfterMs`: a number of ms under a day, or false. */
export const parkAfterMsOption = customOption<number | false>({
  doc: "How long after a delivery first failed an attempt parks it (answered 200, kept in the store's parking lot for a replay) rather than fail again; false: never park.",
  type: 'number (ms) | false',
  defaultText: `${DEFAULT_PARK_AFTER_MS} (20 hours)`,
  bounds: `more than 0, less than ${DAY_MS} (svc drops a delivery after a day)`,
  read(value, name) {
    if (value === undefined) return DEFAULT_PARK_AFTER_MS;
    if (value === false || (typeof value === 'number' && Number.isFinite(value) && value > 0 && value < DAY_MS)) return value;
    throw new RangeError(
      `svc-webhooks: \`${name}\` must be false or a number of milliseconds more than 0 and less than ${DAY_MS} (svc drops a delivery after a day); got ${kindOf(value)}`,
    );
  },
});
