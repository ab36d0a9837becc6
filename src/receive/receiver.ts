import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { checkContentHeaders, readRawBody } from '../capture/read-raw-body';
import { claimDelivery, holdClaim, settleClaim } from '../dedup/claim';
import { SvcWebhookError, isSvcWebhookError } from '../errors';
import type { Settings } from '../options';
import { parseJson } from '../parse/parse-json';
import type { DeliveryListener, DeliveryRecord, ErrorHandler } from '../route/handler-types';
import { DeliveryScope } from '../route/delivery-scope';
import { runHandlers, type RunResult, type SettledResult } from '../route/run-handlers';
import { isThenable } from '../internal/thenable';
import type { ClaimResult } from '../dedup/delivery-store';
import { schemaProblems, schemaViolation, validatorFor } from '../validate/validate-payload';
import type { Delivery, Protocol } from './protocol';
import { isExpectedRefusal, RefusalLog } from './refusal-log';

/** The HTTP answer to one request, independent of the framework that sends it. */
export interface Outcome {
  readonly status: number;
  readonly body: string;
  readonly retryAfter?: number;
  /** More of the request body is still on its way: close the connection rather than read it. */
  readonly closeConnection?: boolean;
}

type Result =
  | { readonly state: 'handled' | 'duplicate'; readonly delivery: Delivery }
  | { readonly state: 'rejected'; readonly error: SvcWebhookError; readonly delivery?: Delivery };

const OK: Outcome = { status: 200, body: '{"ok":true}' };
const DUPLICATE: Outcome = { status: 200, body: '{"ok":true,"duplicate":true}' };

/**
 * The framework-free pipeline: capture -> verify -> parse -> validate -> de-dup claim -> route ->
 * commit or release. Every stage throws a SvcWebhookError; this is the one place that turns them
 * into responses, logs the delivery and tells the error handlers.
 */
export class Receiver<S, D extends Delivery> {
  private inFlight = 0;
  private closing = false;
  private readonly drainWaiters: Array<() => void> = [];
  private readonly refusals: RefusalLog;

  constructor(
    private readonly protocol: Protocol<S, D>,
    private readonly settings: Settings,
    private readonly errorHandlers: readonly ErrorHandler[],
    private readonly listeners: readonly DeliveryListener[] = [],
  ) {
    validatorFor(protocol.schema); // compile at setup, not on the first delivery
    this.refusals = new RefusalLog(settings.logger, settings.now);
  }

  async receive(req: IncomingMessage): Promise<Outcome> {
    const started = performance.now();
    const receivedAt = this.settings.now();
    if (this.closing) {
      return this.finish(req, started, receivedAt, { state: 'rejected', error: new SvcWebhookError('shutting_down', 'the receiver is shutting down', { retryAfter: 5 }) });
    }
    this.inFlight++;
    let background = false;
    try {
      const result = await this.process(req, started, receivedAt, () => {
        background = true;
      });
      return this.finish(req, started, receivedAt, result);
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

  private async process(req: IncomingMessage, started: number, now: number, detach: () => void): Promise<Result> {
    const { protocol, settings } = this;
    let delivery: D | undefined;
    try {
      checkContentHeaders(req);
      const signature = protocol.readSignature(req, now);
      const body = await readRawBody(req, settings.limit);
      const verifying = protocol.verify(signature, body, req);
      if (verifying !== undefined) await verifying;
      const payload = parseJson(body);
      this.validate(payload, req);
      delivery = protocol.delivery(payload, req, signature, now);

      const claimed = claimDelivery(settings.store, delivery.id, settings.leaseMs);
      const claim = isThenable<ClaimResult>(claimed) ? await claimed : claimed;
      if (claim.state === 'done') return { state: 'duplicate', delivery };
      if (claim.state === 'busy') {
        throw new SvcWebhookError('delivery_in_progress', 'this delivery is being handled by an earlier attempt', { retryAfter: this.retryAfter() });
      }

      const ctx = protocol.context(delivery, [delivery.id, delivery.kind, req, now, settings.logger]);
      const calls = protocol.calls(delivery, ctx);
      // The deadline counts from arrival: the sender's 10 s include reading, verifying and claiming.
      const deadlineMs = Math.max(1, settings.timeoutMs - (performance.now() - started));
      const running = runHandlers(calls, deadlineMs, () => DeliveryScope.abort(ctx));
      const run = isThenable<RunResult>(running) ? await running : running;
      if (run.state === 'timed_out') {
        // The claim stays held (its lease renewed) until the handlers settle, so a retry cannot run them concurrently.
        detach();
        const id = delivery.id;
        const stopHolding = holdClaim(settings.store, id, claim.token, settings.leaseMs, settings.logger);
        void run.settled
          .then((end) => {
            stopHolding();
            return this.afterLateSettle(id, claim.token, end, ctx.log);
          })
          .finally(() => this.settled());
        throw new SvcWebhookError('handler_timeout', `handlers did not finish within ${settings.timeoutMs} ms of the request's arrival`, { retryAfter: this.retryAfter() });
      }
      const settledClaim = settleClaim(settings.store, delivery.id, claim.token, run, settings.logger);
      if (settledClaim !== undefined) await settledClaim;
      if (run.state === 'failed') throw new SvcWebhookError('handler_failed', 'a handler failed', { cause: run.error });
      return { state: 'handled', delivery };
    } catch (err) {
      const error = isSvcWebhookError(err) ? err : new SvcWebhookError('internal_error', 'internal error', { cause: err });
      return delivery === undefined ? { state: 'rejected', error } : { state: 'rejected', error, delivery };
    }
  }

  private validate(payload: unknown, req: IncomingMessage): void {
    const policy = this.settings.schemaPolicy;
    if (policy === 'skip') return;
    const found = schemaProblems(validatorFor(this.protocol.schema), payload);
    if (found.length === 0) return;
    const error = schemaViolation(found);
    if (policy === 'reject') throw error;
    this.settings.logger.warn({ err: error, problems: found, url: req.url }, 'delivery does not match the schema; handled anyway (schemaPolicy warn)');
  }

  private async afterLateSettle(id: string, token: string, end: SettledResult, log: Logger): Promise<void> {
    await settleClaim(this.settings.store, id, token, end, this.settings.logger);
    if (end.state === 'failed') log.error({ err: end.error }, 'handlers failed after their deadline; the claim is released for the retry');
    else log.info('handlers finished after their deadline; the delivery is recorded as handled');
  }

  private retryAfter(): number {
    return Math.max(1, Math.ceil(this.settings.timeoutMs / 1000));
  }

  private finish(req: IncomingMessage, started: number, receivedAt: number, result: Result): Outcome {
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const delivery = result.delivery;
    const fields = { deliveryId: delivery?.id, kind: delivery?.kind, outcome: result.state, durationMs };
    const log = this.settings.logger;
    if (result.state !== 'rejected') {
      log.info({ ...fields, status: 200 }, 'delivery received');
      this.tellListeners(() => ({ ...fields, webhook: this.protocol.webhook, status: 200, receivedAt, payload: delivery?.payload }));
      return result.state === 'handled' ? OK : DUPLICATE;
    }
    const { error } = result;
    if (isExpectedRefusal(error)) this.refusals.refused(error, req, fields);
    else log[error.status >= 500 ? 'error' : 'warn']({ ...fields, status: error.status, code: error.code, err: error }, 'delivery refused');
    this.tellListeners(() => ({ ...fields, webhook: this.protocol.webhook, status: error.status, code: error.code, receivedAt, payload: delivery?.payload }));
    this.tellErrorHandlers(error, req, delivery);
    const outcome: { -readonly [K in keyof Outcome]: Outcome[K] } = {
      status: error.status,
      body: JSON.stringify({ ok: false, code: error.code, message: error.message }),
    };
    if (error.retryAfter !== undefined) outcome.retryAfter = error.retryAfter;
    // Refused before the body was read (a forged or oversized request): do not spend reading it.
    if (!req.complete) outcome.closeConnection = true;
    return outcome;
  }

  private tellListeners(record: () => DeliveryRecord): void {
    if (this.listeners.length === 0) return;
    const built = record();
    this.notify(this.listeners, 'an onDelivery listener failed', (listener) => listener(built));
  }

  private tellErrorHandlers(error: SvcWebhookError, req: IncomingMessage, delivery: Delivery | undefined): void {
    const ctx = { webhook: this.protocol.webhook, deliveryId: delivery?.id, kind: delivery?.kind, req, log: this.settings.logger };
    this.notify(this.errorHandlers, 'an onError handler failed', (handler) => handler(error, ctx));
  }

  /** Observers run after the answer is decided; whatever they throw or reject is logged, never raised. */
  private notify<F>(observers: readonly F[], what: string, call: (observer: F) => unknown): void {
    for (const observer of observers) {
      Promise.resolve()
        .then(() => call(observer))
        .catch((err: unknown) => this.settings.logger.error({ err }, what));
    }
  }
}
