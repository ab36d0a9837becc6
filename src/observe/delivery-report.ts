import type { SvcWebhookError } from '../errors';
import type { Delivery } from '../internal/delivery/delivery';
import { childDropping, NO_SECRETS } from '../internal/logging/log-redaction';
import type { WebhookLogger } from '../internal/logging/logger';
import type { RequestAccess, RequestFacts } from '../internal/request/request-access';
import { RequestScope } from '../internal/request/request-scope';
import { safeError } from '../internal/logging/safe-error';
import type { DeliveryListener, DeliveryRecord, ErrorContext, ErrorHandler, IgnoreReason, QueueOutcome } from '../internal/delivery/delivery-record';
import { isCountedRefusal, RefusalLog } from './refusal-log';
import type { DeliveryTrace } from './telemetry';

/** Where a webhook's outcomes are reported. */
export interface ReportParts {
  readonly webhook: 'board' | 'bot';
  /** Every line but the one per accepted delivery, scrubbed of secrets. */
  readonly logger: WebhookLogger;
  /** The one line per accepted delivery: its fields are the library's own. */
  readonly lineLogger: WebhookLogger;
  readonly listeners: readonly DeliveryListener[];
  readonly errorHandlers: readonly ErrorHandler[];
  /** The clock of the refusal log's rate limit. */
  readonly now: () => number;
}

/** What was read of a refused request: for the delivery record, which explains the refusal. */
export interface Received {
  readonly body: Uint8Array;
  readonly verified: boolean;
  /** The parsed body, when it was verified and parsed (a schema refusal). */
  readonly payload?: unknown;
}

/** One request the receiver answered. */
export type Answered = {
  readonly delivery?: Delivery | undefined;
  /** Time from arrival to the answer, in ms. */
  readonly durationMs: number;
  /** When the request arrived, in ms since the epoch. */
  readonly receivedAt: number;
  /** Inbox mode: the line and the record carry the queue outcome. */
  readonly inbox: boolean;
  readonly trace: DeliveryTrace | undefined;
} & (
  | { readonly state: 'handled' | 'duplicate' | 'enqueued' | 'parked' }
  /** Board, with the `ignore` option: answered 200 without running handlers, and why. */
  | { readonly state: 'ignored'; readonly ignored: IgnoreReason }
  | {
      readonly state: 'rejected';
      readonly error: SvcWebhookError;
      readonly received?: Received | undefined;
      /** With a resolver: the verifying board's secrets, dropped from the refusal's line. */
      readonly verifierSecrets: readonly string[];
      /** The request, for the refusal log and the error handlers' context. */
      readonly request: { readonly facts: RequestFacts; readonly source: unknown; readonly access: RequestAccess<never> };
    }
);

/** One processing attempt of an inbox worker. */
export interface Attempt {
  readonly delivery: { readonly deliveryId: string; readonly kind: string; readonly receivedAt: number };
  readonly attempt: number;
  readonly outcome: Exclude<QueueOutcome, 'enqueued' | 'duplicate'>;
  /** The refusal's code, when the attempt failed. */
  readonly code?: string | undefined;
  readonly error?: unknown;
  readonly durationMs: number;
  /** With a resolver: the verifying board's secrets. */
  readonly verifierSecrets?: readonly string[];
  /** When it will be retried: in ms from now. */
  readonly retryInMs?: number;
}

/** A delivery whose handler failed was verified and accepted: it failed here, it was not refused. */
const HANDLER_CODES: ReadonlySet<string> = new Set(['handler_failed', 'handler_timeout']);
const HANDLER_FAILED = 'delivery failed in a handler; svc retries it';
const DEAD_LETTER = 'delivery failed for the last time; kept as a dead letter (svc-webhooks inbox list)';

/**
 * Reports outcomes: one log line each, the `onDelivery` listeners, the `onError` handlers, the
 * delivery span and metrics. Used by the receiver and the inbox worker alike. Observers run after
 * the answer is decided; whatever they throw is logged, never raised.
 */
export class DeliveryReport {
  private readonly refusals: RefusalLog;

  constructor(private readonly parts: ReportParts) {
    this.refusals = new RefusalLog(parts.logger, parts.now);
  }

  /** The receiver's report of one answered request. */
  answered(a: Answered): void {
    const { delivery } = a;
    if (a.state === 'ignored') return this.ignored(a, delivery!);
    const queue = a.inbox ? queueOutcome(a.state) : undefined;
    if (a.state !== 'rejected') {
      // Its own literal, without undefined members: the cheapest object for pino to write.
      const line = { deliveryId: delivery!.id, kind: delivery!.kind, outcome: a.state, status: 200, durationMs: a.durationMs };
      if (queue === undefined) this.parts.lineLogger.info(line, 'delivery received');
      else this.parts.lineLogger.info({ ...line, queue }, 'delivery received');
      a.trace?.end({ outcome: a.state, status: 200, deliveryId: delivery?.id, kind: delivery?.kind });
      // Stryker disable next-line OptionalChaining: `delivery` was read above: it is there (test/mutation/EQUIVALENT.core.md)
      this.tell(() => ({ ...line, webhook: this.parts.webhook, receivedAt: a.receivedAt, verified: true, payload: delivery?.payload, queue }));
      return;
    }
    const { error } = a;
    const fields = { deliveryId: delivery?.id, kind: delivery?.kind, outcome: a.state, durationMs: a.durationMs, queue };
    // An expected refusal is one line without a stack trace, rate-limited per code.
    if (isCountedRefusal(error)) this.refusals.refused(error, a.request.facts, fields);
    else if (error.status >= 500) {
      // Its cause is what a handler or a store threw: with a resolver, it may hold the board's secret.
      childDropping(this.parts.logger, {}, a.verifierSecrets).error(
        { ...fields, status: error.status, code: error.code, err: safeError(error) },
        HANDLER_CODES.has(error.code) ? HANDLER_FAILED : 'delivery refused',
      );
    } else
      this.parts.logger.warn(
        { ...fields, status: error.status, code: error.code, err: { type: error.name, code: error.code, message: error.message } },
        'delivery refused',
      );
    a.trace?.end({ outcome: 'rejected', status: error.status, code: error.code, message: error.message, deliveryId: delivery?.id, kind: delivery?.kind });
    this.tell(() => refusalRecord({ ...fields, webhook: this.parts.webhook, receivedAt: a.receivedAt }, error, a.received));
    if (this.parts.errorHandlers.length > 0) {
      const ctx = new ErrorScope(a.request, this.parts.webhook, delivery, this.parts.logger);
      this.notify(this.parts.errorHandlers, 'an onError handler failed', (handler) => handler(error, ctx));
    }
  }

  /** An ignored event: a line at debug, the span and metric (outcome `ignored`), and the record. */
  private ignored(a: Answered & { readonly state: 'ignored' }, delivery: Delivery): void {
    const line = { deliveryId: delivery.id, kind: delivery.kind, outcome: a.state, ignored: a.ignored, status: 200, durationMs: a.durationMs };
    this.parts.lineLogger.debug(line, 'delivery ignored');
    a.trace?.end({ outcome: a.state, ignored: a.ignored, status: 200, deliveryId: delivery.id, kind: delivery.kind });
    this.tell(() => ({ ...line, webhook: this.parts.webhook, receivedAt: a.receivedAt, verified: true, payload: delivery.payload }));
  }

  /** An inbox worker's report of one processing attempt: a line at the level its outcome deserves, and the record. */
  attempt(a: Attempt): void {
    const { deliveryId, kind, receivedAt } = a.delivery;
    quietly(() => {
      const log = childDropping(this.parts.logger, { deliveryId, kind, attempt: a.attempt }, a.verifierSecrets ?? NO_SECRETS);
      const fields = { queue: a.outcome, durationMs: a.durationMs };
      if (a.outcome === 'processed') log.info(fields, 'delivery processed');
      else if (a.outcome === 'retried') log.warn({ ...fields, err: safeError(a.error), retryInMs: a.retryInMs }, 'delivery attempt failed; it will be retried');
      else log.error({ ...fields, err: safeError(a.error), attempts: a.attempt }, DEAD_LETTER);
    });
    const failed = a.outcome !== 'processed';
    this.tell(() => ({
      webhook: this.parts.webhook,
      deliveryId,
      kind,
      outcome: failed ? 'rejected' : 'handled',
      status: failed ? 500 : 200,
      ...(a.code === undefined ? {} : { code: a.code }),
      durationMs: a.durationMs,
      receivedAt,
      verified: true,
      queue: a.outcome,
      attempt: a.attempt,
    }));
  }

  /** Tells the `onDelivery` listeners; the record is built only when there is one. */
  private tell(record: () => DeliveryRecord): void {
    if (this.parts.listeners.length === 0) return;
    const built = record();
    this.notify(this.parts.listeners, 'an onDelivery listener failed', (listener) => listener(built));
  }

  private notify<F>(observers: readonly F[], what: string, call: (observer: F) => unknown): void {
    const report = (err: unknown) => quietly(() => this.parts.logger.error({ err: safeError(err) }, what));
    for (const observer of observers)
      Promise.resolve()
        .then(() => call(observer))
        .catch(report);
  }
}

function queueOutcome(state: Answered['state']): QueueOutcome | undefined {
  return state === 'enqueued' || state === 'duplicate' ? state : undefined;
}

/** The record of a refused delivery: why (code, message, failing schema paths) and what was read. */
function refusalRecord(
  base: Pick<DeliveryRecord, 'webhook' | 'deliveryId' | 'kind' | 'durationMs' | 'receivedAt' | 'queue'>,
  error: SvcWebhookError,
  received: Received | undefined,
): DeliveryRecord {
  const record: { -readonly [K in keyof DeliveryRecord]: DeliveryRecord[K] } = {
    ...base,
    outcome: 'rejected',
    status: error.status,
    code: error.code,
    message: error.message,
    verified: received?.verified === true,
  };
  if (error.code === 'schema_violation' && Array.isArray(error.details) && error.details.length > 0)
    record.problems = error.details as DeliveryRecord['problems'];
  if (received !== undefined) {
    record.body = received.body;
    if (received.payload !== undefined) record.payload = received.payload;
  }
  return record;
}

/** Logging must not decide a delivery's fate: a logger that throws has nowhere left to report to. */
export function quietly(write: () => void): void {
  try {
    write();
  } catch {
    // Nothing to do: the delivery's outcome stands.
  }
}

/** The context of the error handlers. */
class ErrorScope extends RequestScope implements ErrorContext {
  readonly deliveryId: string | undefined;
  readonly kind: string | undefined;

  constructor(
    request: { readonly source: unknown; readonly access: RequestAccess<never> },
    readonly webhook: 'board' | 'bot',
    delivery: Delivery | undefined,
    readonly log: WebhookLogger,
  ) {
    super(request.source, request.access);
    this.deliveryId = delivery?.id;
    this.kind = delivery?.kind;
  }
}
