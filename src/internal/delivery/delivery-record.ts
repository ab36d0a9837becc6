import type { IncomingMessage } from 'node:http';
import type { Awaitable } from '../checks/awaitable';
import type { SvcWebhookError } from '../../errors';
import type { WebhookLogger } from '../logging/logger';

/** Where an error happened; fields are absent when the request failed before they were known. */
export interface ErrorContext {
  readonly webhook: 'board' | 'bot';
  readonly deliveryId?: string;
  readonly kind?: string;
  /** As in DeliveryContext: the Node request; absent under `createWebHandler`. */
  readonly req?: IncomingMessage;
  /** As in DeliveryContext: the request as a Fetch `Request`. */
  readonly request?: Request;
  readonly log: WebhookLogger;
}

/** Told of every delivery answered with an error, after the response is decided. */
export type ErrorHandler = (error: SvcWebhookError, ctx: ErrorContext) => Awaitable<unknown>;

/** One answered request, as the delivery log line records it; for dashboards and metrics. */
export interface DeliveryRecord {
  readonly webhook: 'board' | 'bot';
  /** Absent when the request was refused before its body was verified and parsed. */
  readonly deliveryId?: string;
  readonly kind?: string;
  /**
   * `enqueued`: accepted into the inbox (inbox mode), its handlers run later in a worker. `ignored`:
   * an authentic board event the `ignore` option left out, answered 200 without running handlers
   * (`ignored` says why). `parked`: kept in the store's parking lot instead of being run
   * (`parkAfterMs`, `schemaPolicy: 'park'`), answered 200.
   */
  readonly outcome: 'handled' | 'duplicate' | 'rejected' | 'enqueued' | 'ignored' | 'parked';
  /** Why an `ignored` delivery was left out; absent for every other outcome. */
  readonly ignored?: IgnoreReason;
  /**
   * The HTTP status answered. For a worker's processing attempt (inbox mode), what direct mode would
   * have answered: 200 when processed, 500 when the attempt failed.
   */
  readonly status: number;
  /**
   * Inbox mode only: at receive time `enqueued` or `duplicate`; for each processing attempt in a
   * worker `processed`, `retried` (failed, will run again) or `dead` (failed for the last time: a dead letter).
   */
  readonly queue?: QueueOutcome;
  /** Inbox mode, processing attempts only: which attempt this was (1, 2, …). */
  readonly attempt?: number;
  /** The error code of a refused delivery. */
  readonly code?: string;
  /** Why a delivery was refused, in this library's words (safe to show: never a secret or signature). */
  readonly message?: string;
  /** The failing paths of a schema refusal (`schema_violation`), at most five. */
  readonly problems?: readonly { readonly path: string; readonly message: string }[];
  readonly durationMs: number;
  /** When the request arrived, in ms since the epoch. */
  readonly receivedAt: number;
  /** True once the signature was checked: `payload` and `body` are then the sender's. */
  readonly verified: boolean;
  /** The verified, parsed body; absent when the request was refused before it was verified and parsed. */
  readonly payload?: unknown;
  /**
   * The raw body of a refused request, when it was read: unverified (forged or corrupted) unless
   * `verified` is true. Show an unverified body only as its size and a short escaped preview. A
   * Buffer on Node; a Uint8Array on runtimes without Buffer.
   */
  readonly body?: Uint8Array;
}

/**
 * Why the board webhook's `ignore` option left an event out: `self` (its actor is the bot of
 * `ignore.self`), `bot` (another bot, `ignore.bots`) or `rule` (an automation rule, `ignore.rules`).
 */
export type IgnoreReason = 'self' | 'bot' | 'rule';

/** Inbox mode: at receive time `enqueued` or `duplicate`; for each processing attempt `processed`, `retried` or `dead`. */
export type QueueOutcome = 'enqueued' | 'duplicate' | 'processed' | 'retried' | 'dead';

/** An `onDelivery` listener: told of every answered request, after the answer is decided. */
export type DeliveryListener = (record: DeliveryRecord) => void;
