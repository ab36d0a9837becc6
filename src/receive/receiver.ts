import type { WebhookLogger } from '../internal/logger';
import { checkContentHeaders } from '../capture/check-content-headers';
import { attempt, claimDelivery, commitWithRetry, holdClaim, releaseClaim, type StoreFailure } from '../dedup/claim';
import { SvcWebhookError, isSvcWebhookError } from '../errors';
import type { Settings } from './settings';
import { parseJson } from '../parse/parse-json';
import type { DeliveryListener, DeliveryRecord, ErrorContext, ErrorHandler, QueueOutcome } from '../route/handler-types';
import { DeliveryScope } from '../route/delivery-scope';
import { runHandlers, type RunResult, type SettledResult } from '../route/run-handlers';
import { isThenable } from '../internal/thenable';
import { safeError } from '../internal/safe-error';
import { childDropping, NO_SECRETS } from '../internal/log-redaction';
import type { ClaimResult } from '../dedup/delivery-store';
import { schemaRefusal, validatorFor, type SchemaProblem } from '../validate/validate-payload';
import { RequestScope } from '../internal/request-scope';
import { DeliveryTelemetry, type DeliveryTrace } from '../observe/telemetry';
import type { PathPattern } from '../internal/path-pattern';
import { handlerFailure } from './handler-failure';
import type { Delivery, Protocol } from './protocol';
import type { Handoff } from '../inbox/accepted-delivery';
import { isExpectedRefusal, RefusalLog } from '../observe/refusal-log';
import type { RequestAccess, RequestFacts } from '../internal/request-access';

/** The HTTP answer to one request, independent of the framework that sends it. */
export interface Outcome {
  readonly status: number;
  readonly body: string;
  readonly retryAfter?: number;
  /** More of the request body is still on its way: close the connection rather than read it. */
  readonly closeConnection?: boolean;
}

type Result =
  | { readonly state: 'handled' | 'duplicate' | 'enqueued'; readonly delivery: Delivery }
  | {
      readonly state: 'rejected';
      readonly error: SvcWebhookError;
      readonly delivery?: Delivery;
      readonly received?: Received;
      /** With a resolver: the verifying board's secrets, taken before the handlers ran (one may forget or rotate them). */
      readonly hidden?: readonly string[];
    };

/** What was read of a refused request: for the delivery record, which explains the refusal. */
interface Received {
  readonly body: Buffer;
  readonly verified: boolean;
  /** The parsed body, when it was verified and parsed (a schema refusal). */
  readonly payload?: unknown;
}

function queueOutcome(state: Result['state']): QueueOutcome | undefined {
  return state === 'enqueued' || state === 'duplicate' ? state : undefined;
}

const OK: Outcome = { status: 200, body: '{"ok":true}' };
// Answered when the pipeline itself failed in a way it could not describe (a logger that throws).
const INTERNAL: Outcome = { status: 500, body: '{"ok":false,"code":"internal_error","message":"internal error"}' };
const DUPLICATE: Outcome = { status: 200, body: '{"ok":true,"duplicate":true}' };

/**
 * The framework-free pipeline: capture -> verify -> parse -> validate -> de-dup claim -> route ->
 * commit or release. Every stage throws a SvcWebhookError; this is the one place that turns them
 * into responses, logs the delivery and tells the error handlers. It takes any request type with
 * the RequestAccess that reads it; the Express, node:http, Fetch and Fastify adapters only send the
 * Outcome.
 */
export class Receiver<S, D extends Delivery> {
  private inFlight = 0;
  private closing = false;
  private readonly drainWaiters: Array<() => void> = [];
  private readonly refusals: RefusalLog;
  private readonly telemetry: DeliveryTelemetry;

  constructor(
    private readonly protocol: Protocol<S, D>,
    private readonly settings: Settings,
    private readonly errorHandlers: readonly ErrorHandler[],
    private readonly listeners: readonly DeliveryListener[] = [],
    /** Inbox mode: after the claim, hand the delivery over and commit, instead of running handlers. */
    private readonly handoff?: Handoff<D>,
  ) {
    validatorFor(protocol.schema); // compile at setup, not on the first delivery
    this.refusals = new RefusalLog(settings.logger, settings.now);
    this.telemetry = new DeliveryTelemetry(protocol.webhook, settings.fixedSecrets);
  }

  /** The path the webhook answers when mounted without a router. */
  get path(): string {
    return this.settings.path;
  }

  get pattern(): PathPattern {
    return this.settings.pattern;
  }

  async receive<R>(req: R, access: RequestAccess<R>): Promise<Outcome> {
    const request = access.facts(req);
    const started = performance.now();
    const receivedAt = this.settings.now();
    const trace = this.telemetry.start();
    if (this.closing) {
      return this.finish(req, access, request, started, receivedAt, { state: 'rejected', error: new SvcWebhookError('shutting_down', 'the receiver is shutting down', { retryAfter: 5 }) }, trace);
    }
    this.inFlight++;
    let background = false;
    try {
      const result = await this.process(req, access, request, started, receivedAt, () => {
        background = true;
      }, trace);
      return this.finish(req, access, request, started, receivedAt, result, trace);
    } catch {
      // Only a logger or a listener's own failure gets here: the answer must still be ours.
      return INTERNAL;
    } finally {
      if (!background) this.settled();
    }
  }

  /** Stops taking deliveries (503) and resolves when every running handler has settled. */
  close(): Promise<void> {
    this.closing = true;
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private settled(): void {
    if (--this.inFlight === 0 && this.closing) for (const resolve of this.drainWaiters.splice(0)) resolve();
  }

  private async process<R>(req: R, access: RequestAccess<R>, request: RequestFacts, started: number, now: number, detach: () => void, trace: DeliveryTrace | undefined): Promise<Result> {
    const { protocol, settings } = this;
    let delivery: D | undefined;
    let body: Buffer | undefined;
    let verified = false;
    let payload: unknown;
    let hidden = NO_SECRETS;
    try {
      checkContentHeaders(request);
      const signature = protocol.readSignature(request, now);
      body = await access.readBody(req, settings.maxBodyBytes);
      const verifying = protocol.verify(signature, body, request);
      if (verifying !== undefined) await verifying;
      verified = true;
      payload = parseJson(body);
      // The warning closure is made only under the `warn` policy, where it has something to log.
      const warn = settings.schemaPolicy === 'warn' ? (error: SvcWebhookError, found: SchemaProblem[]) => this.warnSchema(error, found, access.url(req)) : undefined;
      const invalid = schemaRefusal(protocol.schema, payload, settings.schemaPolicy, warn);
      if (invalid !== undefined) {
        // The refusal still names its delivery when the payload is well-formed enough to say which.
        delivery = this.deliveryNamedBy(payload, request, signature, now);
        throw invalid;
      }
      delivery = protocol.delivery(payload, request, signature, now);
      hidden = protocol.secretsOf(delivery);

      const claimed = claimDelivery(settings.store, delivery.id, settings.leaseMs);
      const claim = isThenable<ClaimResult>(claimed) ? await claimed : claimed;
      if (claim.state === 'done') return { state: 'duplicate', delivery };
      if (claim.state === 'busy') {
        throw new SvcWebhookError('delivery_in_progress', 'this delivery is being handled by an earlier attempt', { retryAfter: this.retryAfter() });
      }

      if (this.handoff !== undefined) {
        try {
          await this.handoff({ delivery, body, request, receivedAt: now, trace: trace?.carrier() });
        } catch (err) {
          const released = releaseClaim(settings.store, delivery.id, claim.token, settings.logger);
          if (released !== undefined) await released;
          throw err;
        }
        this.commitEnqueued(delivery.id, claim.token, started, detach);
        return { state: 'enqueued', delivery };
      }

      const ctx = protocol.context(delivery, [delivery.id, delivery.kind, req, access, now, settings.logger]);
      DeliveryScope.dropFromLog(ctx, hidden);
      const own = protocol.calls(delivery, ctx);
      DeliveryScope.bindClaim(ctx, { store: settings.store, token: claim.token, handlers: own.length });
      const calls = trace === undefined ? own : trace.handlers(own, delivery.id, delivery.kind, hidden);
      // The deadline counts from arrival: the sender's 10 s include reading, verifying and claiming.
      const deadlineMs = Math.max(1, settings.timeoutMs - (performance.now() - started));
      const running = runHandlers(calls, deadlineMs, () => DeliveryScope.abort(ctx));
      const run = isThenable<RunResult>(running) ? await running : running;
      if (run.state === 'timed_out') {
        detach();
        this.holdUntilSettled(delivery.id, claim.token, run.settled, started, ctx.log);
        throw new SvcWebhookError('handler_timeout', `handlers did not finish within ${settings.timeoutMs} ms of the request's arrival`, { retryAfter: this.retryAfter() });
      }
      if (run.state === 'failed') {
        const released = releaseClaim(settings.store, delivery.id, claim.token, settings.logger);
        if (released !== undefined) await released;
        throw handlerFailure(run.error);
      }
      const committed = this.commitAccepted(delivery.id, claim.token, started, detach);
      if (committed !== undefined) await committed;
      return { state: 'handled', delivery };
    } catch (err) {
      const error = isSvcWebhookError(err) ? err : new SvcWebhookError('internal_error', 'internal error', { cause: err });
      const received: Received | undefined = body === undefined ? undefined : payload === undefined ? { body, verified } : { body, verified, payload };
      return { state: 'rejected', error, ...(delivery === undefined ? {} : { delivery }), ...(received === undefined ? {} : { received }), hidden };
    }
  }

  /** Records the delivery as done; synchronous when the store answers so (the memory store). */
  private commitAccepted(id: string, token: string, started: number, detach: () => void): void | Promise<void> {
    const committed = attempt(() => this.settings.store.commit(id, token));
    return isThenable<StoreFailure>(committed) ? committed.then((failed) => this.commitLater(id, token, started, detach, failed)) : this.commitLater(id, token, started, detach, committed);
  }

  /**
   * Inbox mode: the queue holds the delivery, so the answer does not wait for the store's record.
   * The commit is sent now (before a later request's claim) and retried in the background while
   * the lease keeps repeats away; a repeat that comes first is answered 409 and retried by svc.
   */
  private commitEnqueued(id: string, token: string, started: number, detach: () => void): void {
    const { store, leaseMs, logger } = this.settings;
    const committed = attempt(() => store.commit(id, token));
    if (!isThenable<StoreFailure>(committed)) return this.commitLater(id, token, started, detach, committed);
    detach();
    this.inBackground(committed.then((failed) => commitWithRetry(store, id, token, started + leaseMs, logger, failed)));
  }

  private commitLater(id: string, token: string, started: number, detach: () => void, failed: StoreFailure): void {
    const { store, leaseMs, logger } = this.settings;
    if (failed) {
      // The handlers did run (or the inbox holds the delivery): answer 200 and keep committing in the
      // background while the lease keeps retries away, so a store that blinks does not make a repeat
      // run them (or enqueue it) again.
      detach();
      this.inBackground(commitWithRetry(store, id, token, started + leaseMs, logger, failed));
    }
  }

  private warnSchema(error: SvcWebhookError, found: SchemaProblem[], url: string): void {
    this.settings.logger.warn({ err: error, problems: found, url }, 'delivery does not match the schema; handled anyway (schemaPolicy warn)');
  }

  private deliveryNamedBy(payload: unknown, request: RequestFacts, signature: S, now: number): D | undefined {
    try {
      return this.protocol.delivery(payload, request, signature, now);
    } catch {
      return undefined;
    }
  }

  /**
   * Handlers outlived their deadline: the claim stays held (its lease renewed) until they settle, so
   * a retry cannot run them concurrently; then it is committed or released. A run still unsettled
   * after `abandonAfter` is given up: its claim is released for the sender's next retry.
   */
  private holdUntilSettled(id: string, token: string, settled: Promise<SettledResult>, started: number, log: WebhookLogger): void {
    const { store, leaseMs, abandonAfterMs, logger } = this.settings;
    let abandoned = false;
    const hold = holdClaim(store, id, token, leaseMs, abandonAfterMs - (performance.now() - started), logger, () => {
      abandoned = true;
      log.error({ abandonAfterMs }, 'handlers did not settle within abandonAfter; the run is abandoned and the claim released, so the next retry runs them again');
      this.settled();
    });
    const settle = settled.then(async (end) => {
      hold.stop();
      if (end.state === 'failed') {
        log.error({ err: safeError(end.error) }, abandoned ? 'an abandoned run failed' : 'handlers failed after their deadline; the claim is released for the retry');
        if (!abandoned) await releaseClaim(store, id, token, logger);
      } else {
        // Recorded even when abandoned: the store's token check keeps a retry's own claim intact.
        log.info(abandoned ? 'an abandoned run finished; the delivery is recorded as handled' : 'handlers finished after their deadline; the delivery is recorded as handled');
        // The last renewal was at most a third of a lease ago.
        await commitWithRetry(store, id, token, performance.now() + (leaseMs * 2) / 3, logger, await attempt(() => store.commit(id, token)));
      }
    });
    void settle.catch(() => undefined).finally(() => {
      if (!abandoned) this.settled();
    });
  }

  /** Work that goes on after the answer; `close()` waits for it. It logs its own failures. */
  private inBackground(work: Promise<unknown>): void {
    void work.catch(() => undefined).finally(() => this.settled());
  }

  private retryAfter(): number {
    return Math.max(1, Math.ceil(this.settings.timeoutMs / 1000));
  }

  private finish<R>(req: R, access: RequestAccess<R>, request: RequestFacts, started: number, receivedAt: number, result: Result, trace: DeliveryTrace | undefined): Outcome {
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const delivery = result.delivery;
    const fields = { deliveryId: delivery?.id, kind: delivery?.kind, outcome: result.state, durationMs, queue: this.handoff === undefined ? undefined : queueOutcome(result.state) };
    const log = this.settings.logger;
    if (result.state !== 'rejected') {
      // Its own literal, without undefined members: the cheapest object for pino to write.
      const line = { deliveryId: delivery!.id, kind: delivery!.kind, outcome: result.state, status: 200, durationMs };
      if (fields.queue === undefined) this.settings.lineLogger.info(line, 'delivery received');
      else this.settings.lineLogger.info({ ...line, queue: fields.queue }, 'delivery received');
      trace?.end({ outcome: result.state, status: 200, deliveryId: delivery?.id, kind: delivery?.kind });
      this.tellListeners(() => ({ ...fields, webhook: this.protocol.webhook, status: 200, receivedAt, verified: true, payload: delivery?.payload }));
      return result.state === 'duplicate' ? DUPLICATE : OK;
    }
    const { error } = result;
    if (error.status >= 500) {
      // Its cause is what a handler or a store threw: with a resolver, it may hold the board's secret.
      childDropping(log, {}, result.hidden ?? NO_SECRETS).error({ ...fields, status: error.status, code: error.code, err: safeError(error) }, 'delivery refused');
    }
    // An expected refusal is one line without a stack trace, rate-limited per code.
    else if (isExpectedRefusal(error)) this.refusals.refused(error, request, fields);
    else log.warn({ ...fields, status: error.status, code: error.code, err: { type: error.name, code: error.code, message: error.message } }, 'delivery refused');
    trace?.end({ outcome: 'rejected', status: error.status, code: error.code, message: error.message, deliveryId: delivery?.id, kind: delivery?.kind });
    this.tellListeners(() => refusalRecord({ ...fields, webhook: this.protocol.webhook, receivedAt }, error, result.received));
    this.tellErrorHandlers(error, req, access, delivery);
    const outcome: { -readonly [K in keyof Outcome]: Outcome[K] } = {
      status: error.status,
      body: JSON.stringify({ ok: false, code: error.code, message: error.message }),
    };
    if (error.retryAfter !== undefined) outcome.retryAfter = error.retryAfter;
    // Refused before the body was read (a forged or oversized request): do not spend reading it.
    if (!access.complete(req)) outcome.closeConnection = true;
    return outcome;
  }

  private tellListeners(record: () => DeliveryRecord): void {
    if (this.listeners.length === 0) return;
    const built = record();
    this.notify(this.listeners, 'an onDelivery listener failed', (listener) => listener(built));
  }

  private tellErrorHandlers<R>(error: SvcWebhookError, req: R, access: RequestAccess<R>, delivery: Delivery | undefined): void {
    if (this.errorHandlers.length === 0) return;
    const ctx = new ErrorScope(req, access, this.protocol.webhook, delivery, this.settings.logger);
    this.notify(this.errorHandlers, 'an onError handler failed', (handler) => handler(error, ctx));
  }

  /** Observers run after the answer is decided; whatever they throw or reject is logged, never raised. */
  private notify<F>(observers: readonly F[], what: string, call: (observer: F) => unknown): void {
    const report = (err: unknown) => {
      try {
        this.settings.logger.error({ err: safeError(err) }, what);
      } catch {
        // A logger that throws has nowhere left to report to; the process must not end for it.
      }
    };
    for (const observer of observers) Promise.resolve().then(() => call(observer)).catch(report);
  }
}

/** The record of a refused delivery: why (code, message, failing schema paths) and what was read. */
function refusalRecord(
  base: Pick<DeliveryRecord, 'webhook' | 'deliveryId' | 'kind' | 'durationMs' | 'receivedAt'>,
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
  if (error.code === 'schema_violation' && Array.isArray(error.details) && error.details.length > 0) record.problems = error.details as SchemaProblem[];
  if (received !== undefined) {
    record.body = received.body;
    if (received.payload !== undefined) record.payload = received.payload;
  }
  return record;
}

/** The context of the error handlers. */
class ErrorScope extends RequestScope implements ErrorContext {
  readonly deliveryId: string | undefined;
  readonly kind: string | undefined;

  constructor(
    source: unknown,
    access: RequestAccess<never>,
    readonly webhook: 'board' | 'bot',
    delivery: Delivery | undefined,
    readonly log: WebhookLogger,
  ) {
    super(source, access);
    this.deliveryId = delivery?.id;
    this.kind = delivery?.kind;
  }
}
