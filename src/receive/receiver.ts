import { checkContentHeaders } from '../capture/check-content-headers';
import { claimDelivery } from '../dedup/claim';
import type { ClaimResult } from '../dedup/delivery-store';
import { SvcWebhookError, isSvcWebhookError } from '../errors';
import type { Handoff } from '../inbox/accepted-delivery';
import type { Delivery, Verified } from '../internal/delivery';
import { NO_SECRETS } from '../internal/log-redaction';
import type { PathPattern } from '../internal/path-pattern';
import type { RequestAccess } from '../internal/request-access';
import { isThenable } from '../internal/thenable';
import type { DeliveryReport, Received } from '../observe/delivery-report';
import { MisrouteLog } from '../observe/misroute-log';
import { DeliveryTelemetry } from '../observe/telemetry';
import { parseJson } from '../parse/parse-json';
import { schemaRefusal, validatorFor } from '../validate/validate-payload';
import { InFlight } from './in-flight';
import { answerOf, INTERNAL, type Outcome } from './outcome';
import type { RequestRun } from './request-run';
import { handOver, retryAfter, runHandlersOf } from './run-claimed';
import type { Settings } from './settings';
import type { WebhookKind } from './webhook-kind';

export type { Outcome } from './outcome';

/** What a receiver is made of. */
export interface ReceiverParts<S, D extends Delivery> {
  readonly kind: WebhookKind<S, D>;
  readonly settings: Settings;
  readonly report: DeliveryReport;
  /** Inbox mode: after the claim, hand the delivery over and commit, instead of running handlers. */
  readonly handoff?: Handoff<D> | undefined;
}

type Result =
  | { readonly state: 'handled' | 'duplicate' | 'enqueued'; readonly delivery: Delivery }
  | { readonly state: 'rejected'; readonly error: SvcWebhookError; readonly delivery?: Delivery; readonly received?: Received; readonly hidden: readonly string[] };

/**
 * The framework-free pipeline, in the order a delivery meets its stages: capture -> verify -> parse
 * -> validate -> de-dup claim -> inbox or route -> report. Every stage throws a SvcWebhookError; this
 * is the one place that turns them into answers. It takes any request type with the RequestAccess
 * that reads it; the adapters only send the Outcome.
 */
export class Receiver<S, D extends Delivery> {
  private readonly inFlight = new InFlight();
  private readonly telemetry: DeliveryTelemetry;
  private readonly misroutes: MisrouteLog;

  constructor(private readonly parts: ReceiverParts<S, D>) {
    validatorFor(parts.kind.schema); // compile at setup, not on the first delivery
    this.telemetry = new DeliveryTelemetry(parts.kind.webhook, parts.settings.fixedSecrets);
    this.misroutes = new MisrouteLog(parts.settings.logger, parts.settings.now);
  }

  /** The path the webhook answers when mounted without a router. */
  get path(): string {
    return this.parts.settings.path;
  }

  /** The path's pattern (it may name the board or bot). */
  get pattern(): PathPattern {
    return this.parts.settings.pattern;
  }

  async receive<R>(req: R, access: RequestAccess<R>): Promise<Outcome> {
    const slot = this.inFlight.open();
    const run: RequestRun<R> = { req, access, facts: access.facts(req), started: performance.now(), receivedAt: this.parts.settings.now(), trace: this.telemetry.start(), slot };
    try {
      const result = this.inFlight.isClosing ? shuttingDown() : await this.process(run);
      return this.finish(run, result);
    } catch {
      // Only a logger or a listener's own failure gets here: the answer must still be ours.
      return INTERNAL;
    } finally {
      slot.release();
    }
  }

  /** A signed delivery passed this webhook on another path and was answered 404: one warning a minute per path. */
  misrouted(came: string, answers: readonly string[]): void {
    this.misroutes.misrouted(came, answers);
  }

  /** Where a mount makes the webhook answer: one info line per full path. */
  mounted(fullPath: string, mountedAt: string): void {
    this.misroutes.mounted(fullPath, mountedAt);
  }

  /** Stops taking deliveries (503) and resolves when every running handler has settled. */
  close(): Promise<void> {
    return this.inFlight.close();
  }

  private async process<R>(run: RequestRun<R>): Promise<Result> {
    const { kind, settings, handoff } = this.parts;
    let delivery: D | undefined;
    // What was read, for the record of a refusal: built only when there is one.
    let body: Uint8Array | undefined;
    let verified: Verified | undefined;
    let payload: unknown;
    let hidden = NO_SECRETS;
    try {
      checkContentHeaders(run.facts);
      const signature = kind.verifier.readSignature(run.facts, run.receivedAt);
      body = await run.access.readBody(run.req, settings.maxBodyBytes);
      const verifying = kind.verifier.verify(signature, body, run.facts);
      verified = isThenable<Verified>(verifying) ? await verifying : verifying;
      payload = parseJson(body);
      const facts = { request: run.facts, verified, nowMs: run.receivedAt };
      const invalid = schemaRefusal(kind.schema, payload, settings.schemaPolicy, this.schemaWarning(run));
      // The refusal still names its delivery when the payload is well-formed enough to say which.
      if (invalid !== undefined) delivery = tryCheck(() => kind.check(payload, facts));
      if (invalid !== undefined) throw invalid;
      delivery = kind.check(payload, facts);
      hidden = kind.verifier.secretsOf(verified.by);

      const claimed = claimDelivery(settings.store, delivery.id, settings.leaseMs);
      const claim = isThenable<ClaimResult>(claimed) ? await claimed : claimed;
      if (claim.state === 'done') return { state: 'duplicate', delivery };
      if (claim.state === 'busy') throw new SvcWebhookError('delivery_in_progress', 'this delivery is being handled by an earlier attempt', { retryAfter: retryAfter(settings) });
      const held = { store: settings.store, id: delivery.id, token: claim.token, logger: settings.logger };
      const claimedDelivery = { run, delivery, body, held, hidden, kind, settings };
      if (handoff !== undefined) {
        await handOver(claimedDelivery, handoff);
        return { state: 'enqueued', delivery };
      }
      await runHandlersOf(claimedDelivery);
      return { state: 'handled', delivery };
    } catch (err) {
      const error = isSvcWebhookError(err) ? err : new SvcWebhookError('internal_error', 'internal error', { cause: err });
      const received: Received | undefined = body === undefined ? undefined : payload === undefined ? { body, verified: verified !== undefined } : { body, verified: true, payload };
      return { state: 'rejected', error, ...(delivery === undefined ? {} : { delivery }), ...(received === undefined ? {} : { received }), hidden };
    }
  }

  /** The one report and the answer. */
  private finish<R>(run: RequestRun<R>, result: Result): Outcome {
    const durationMs = Math.round((performance.now() - run.started) * 1000) / 1000;
    const common = { delivery: result.delivery, durationMs, receivedAt: run.receivedAt, inbox: this.parts.handoff !== undefined, trace: run.trace };
    if (result.state !== 'rejected') {
      this.parts.report.answered({ ...common, state: result.state });
      return answerOf(result.state);
    }
    const request = { facts: run.facts, source: run.req, access: run.access as RequestAccess<never> };
    this.parts.report.answered({ ...common, state: 'rejected', error: result.error, received: result.received, hidden: result.hidden, request });
    // Refused before the body was read (a forged or oversized request): do not spend reading it.
    return answerOf(result.error, !run.access.complete(run.req));
  }

  /** Under the `warn` policy only, the line that says an authentic delivery failed the schema. */
  private schemaWarning<R>(run: RequestRun<R>) {
    if (this.parts.settings.schemaPolicy !== 'warn') return undefined;
    return (error: SvcWebhookError, problems: unknown) =>
      this.parts.settings.logger.warn({ err: error, problems, url: run.access.url(run.req) }, 'delivery does not match the schema; handled anyway (schemaPolicy warn)');
  }
}

function shuttingDown(): Result {
  return { state: 'rejected', error: new SvcWebhookError('shutting_down', 'the receiver is shutting down', { retryAfter: 5 }), hidden: NO_SECRETS };
}

/** The delivery a refused payload names, when its checks pass. */
function tryCheck<D>(check: () => D): D | undefined {
  try {
    return check();
  } catch {
    return undefined;
  }
}
