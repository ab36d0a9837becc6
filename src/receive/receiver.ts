import { checkContentHeaders } from '../capture/body-bounds';
import {
  claimDelivery,
  commitEnqueued,
  commitHandled,
  FailedLookup,
  holdUntilSettled,
  lookUpFailure,
  releaseClaim,
  releasedAfter,
  type FailureLookup,
} from '../dedup/claim';
import type { ClaimResult } from '../dedup/delivery-store';
import { SvcWebhookError, isSvcWebhookError } from '../errors';
import type { Handoff } from '../inbox/accepted-delivery';
import type { Delivery, Verified } from '../internal/delivery/delivery';
import { NO_SECRETS } from '../internal/logging/log-redaction';
import type { WebhookLogger } from '../internal/logging/logger';
import type { PathPattern } from '../internal/request/path-pattern';
import type { RequestAccess } from '../internal/request/request-access';
import { headerText } from '../internal/request/headers';
import { isThenable, unlessThrown } from '../internal/checks/value-checks';
import type { DeliveryReport, Received } from '../observe/delivery-report';
import { MisrouteLog } from '../observe/misroute-log';
import { DeliveryTelemetry } from '../observe/telemetry';
import { parseJson } from '../parse/parse-json';
import { dispatch, type RunResult } from '../route/dispatch';
import { schemaRefusal, validatorFor } from '../validate/delivery-checks';
import { answerOf, ignoredAnswer, INTERNAL, type Accepted, type Outcome } from './outcome';
import { InFlight, type Arrival, type Claimed } from './arrival';
import { handlerFailure } from './handler-failure';
import { retryAfter, type IgnoreReason, type Settings } from './settings';
import type { WebhookProtocol } from './webhook-protocol';
import { noteFailure, parkedArrival, parkedToReplay, parkFailing, parkSchemaViolation, replayParked, REPLAY_HEADER, requestedReplay } from './park';

export type { Outcome } from './outcome';

/** What a receiver is made of. */
export interface ReceiverParts<S, D extends Delivery> {
  readonly protocol: WebhookProtocol<S, D>;
  readonly settings: Settings;
  readonly report: DeliveryReport;
  /** Inbox mode: after the claim, hand the delivery over and commit, instead of running handlers. */
  readonly handoff?: Handoff<D> | undefined;
}

type Result =
  | { readonly state: Exclude<Accepted, 'replayed'>; readonly delivery: Delivery }
  | { readonly state: 'replayed'; readonly delivery: Delivery }
  | { readonly state: 'ignored'; readonly delivery: Delivery; readonly ignored: IgnoreReason }
  | Readonly<{ state: 'rejected'; error: SvcWebhookError; delivery?: Delivery; received?: Received; verifierSecrets: readonly string[] }>;

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
    validatorFor(parts.protocol.schema); // compile at setup, not on the first delivery
    this.telemetry = new DeliveryTelemetry(parts.protocol.webhook, parts.settings.fixedSecrets);
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

  /** The webhook's logger (secrets scrubbed). */
  get logger(): WebhookLogger {
    return this.parts.settings.logger;
  }

  async receive<R>(req: R, access: RequestAccess<R>): Promise<Outcome> {
    const slot = this.inFlight.open();
    const facts = access.facts(req);
    const arrival: Arrival<R> = { req, access, facts, started: performance.now(), receivedAt: this.parts.settings.now(), trace: this.telemetry.start(), slot };
    try {
      const result = this.inFlight.isClosing ? shuttingDown() : await this.process(arrival);
      return this.finish(arrival, result);
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

  private async process<R>(arrival: Arrival<R>): Promise<Result> {
    const { protocol, settings, handoff } = this.parts;
    let delivery: D | undefined;
    // What was read, for the record of a refusal: built only when there is one.
    let body: Uint8Array | undefined;
    let verified: Verified | undefined;
    let payload: unknown;
    let verifierSecrets = NO_SECRETS;
    try {
      checkContentHeaders(arrival.facts);
      const signature = protocol.verifier.readSignature(arrival.facts, arrival.receivedAt);
      body = await arrival.access.readBody(arrival.req, settings.maxBodyBytes);
      const verifying = protocol.verifier.verify(signature, body, arrival.facts);
      verified = isThenable<Verified>(verifying) ? await verifying : verifying;
      payload = parseJson(body);
      const facts = { request: arrival.facts, verified, nowMs: arrival.receivedAt };
      const invalid = schemaRefusal(protocol.schema, payload, settings.schemaPolicy, this.schemaWarning(arrival));
      // The refusal still names its delivery when the payload is well-formed enough to say which.
      if (invalid !== undefined) delivery = unlessThrown(() => protocol.check(payload, facts));
      // Under 'park' such a delivery is parked below; one that names no delivery is still refused.
      if (invalid !== undefined && (settings.schemaPolicy !== 'park' || delivery === undefined)) throw invalid;
      delivery ??= protocol.check(payload, facts);
      const ignored = invalid === undefined ? settings.ignore?.(delivery) : undefined;
      if (ignored !== undefined) return { state: 'ignored', delivery, ignored };
      verifierSecrets = protocol.verifier.secretsOf(verified.by);
      if (headerText(arrival.facts, REPLAY_HEADER) !== undefined) {
        const replaying = { arrival, delivery, body, verifierSecrets, protocol, settings };
        return { state: await replayParked(replaying, await requestedReplay(replaying), runHandlersOf), delivery };
      }

      // Parking: when the delivery first failed, looked up beside the claim (direct mode only).
      const lot = handoff === undefined && invalid === undefined && settings.parkAfterMs !== false ? settings.store.parking : undefined;
      const failing = lot === undefined ? undefined : lookUpFailure(lot, delivery.id);
      const claimed = claimDelivery(settings.store, delivery.id, settings.leaseMs);
      const claim = isThenable<ClaimResult>(claimed) ? await claimed : claimed;
      if (claim.state === 'done') return { state: 'duplicate', delivery };
      if (claim.state === 'busy')
        throw new SvcWebhookError('delivery_in_progress', 'this delivery is being handled by an earlier attempt', { retryAfter: retryAfter(settings) });
      const { started, slot } = arrival;
      const held = { store: settings.store, id: delivery.id, token: claim.token, logger: settings.logger, started, leaseMs: settings.leaseMs, slot };
      const claimedDelivery = { arrival, delivery, body, claim: held, verifierSecrets, protocol, settings };
      if (invalid !== undefined) {
        await parkSchemaViolation(claimedDelivery, invalid);
        return { state: 'parked', delivery };
      }
      if (handoff !== undefined) {
        await enqueue(claimedDelivery, handoff);
        return { state: 'enqueued', delivery };
      }
      if (failing !== undefined) {
        // The parking module is reached only for a delivery that failed before.
        const found = isThenable<FailureLookup>(failing) ? await failing : failing;
        if (found instanceof FailedLookup) throw await releasedAfter(held, found);
        const due = found !== undefined && arrival.receivedAt - found.firstAt >= (settings.parkAfterMs as number);
        if (due && (await parkFailing(claimedDelivery, found))) return { state: 'parked', delivery };
      }
      try {
        await runHandlersOf(claimedDelivery);
      } catch (err) {
        await noteFailure(claimedDelivery, err);
        throw err;
      }
      return { state: 'handled', delivery };
    } catch (err) {
      const error = refusal(err);
      const received: Received | undefined =
        body === undefined ? undefined : payload === undefined ? { body, verified: verified !== undefined } : { body, verified: true, payload };
      return { state: 'rejected', error, ...(delivery === undefined ? {} : { delivery }), ...(received === undefined ? {} : { received }), verifierSecrets };
    }
  }

  /** The one report and the answer. */
  private finish<R>(arrival: Arrival<R>, result: Result): Outcome {
    const durationMs = Math.round((performance.now() - arrival.started) * 1000) / 1000;
    const common = { delivery: result.delivery, durationMs, receivedAt: arrival.receivedAt, inbox: this.parts.handoff !== undefined, trace: arrival.trace };
    if (result.state !== 'rejected') {
      this.parts.report.answered(result.state === 'replayed' ? { ...common, state: 'handled' } : { ...common, ...result });
      return result.state === 'ignored' ? ignoredAnswer(result.ignored) : answerOf(result.state);
    }
    const request = { facts: arrival.facts, source: arrival.req, access: arrival.access as RequestAccess<never> };
    this.parts.report.answered({ ...common, ...result, request });
    // Refused before the body was read (a forged or oversized request): do not spend reading it.
    return answerOf(result.error, !arrival.access.complete(arrival.req));
  }

  /**
   * Replays a parked delivery in this process, exactly once: the replay's claim, the handlers, the
   * commit. Its signature is not kept, so it runs as verified when it was parked. Reported as any
   * delivery is; rejects with the refusal (`not_parked`, `handler_failed`, ...).
   */
  async replay(id: string): Promise<'replayed' | 'duplicate'> {
    const { protocol, settings } = this.parts;
    const parked = await parkedToReplay(settings.store.parking, id);
    const arrival = parkedArrival(parked, settings.path, { receivedAt: settings.now(), slot: this.inFlight.open() });
    let result: Result;
    try {
      // Checked as at park time: a bot update's age then, not now.
      const verified = { by: undefined, timestamp: Number(parked.headers['x-svc-timestamp'] ?? 0) };
      const delivery = protocol.check(parseJson(parked.body), { request: arrival.facts, verified, nowMs: parked.parkedAt });
      const replaying = { arrival, delivery, body: parked.body, verifierSecrets: NO_SECRETS, protocol, settings };
      result = { state: await replayParked(replaying, parked, runHandlersOf), delivery };
    } catch (err) {
      result = { state: 'rejected', error: refusal(err), verifierSecrets: NO_SECRETS };
    } finally {
      arrival.slot.release();
    }
    this.finish(arrival, result);
    if (result.state === 'rejected') throw result.error;
    return result.state as 'replayed' | 'duplicate';
  }

  /** Under the `warn` policy only, the line that says an authentic delivery failed the schema. */
  private schemaWarning<R>(arrival: Arrival<R>) {
    if (this.parts.settings.schemaPolicy !== 'warn') return undefined;
    return (error: SvcWebhookError, problems: unknown) =>
      this.parts.settings.logger.warn(
        { err: error, problems, url: arrival.access.url(arrival.req) },
        'delivery does not match the schema; handled anyway (schemaPolicy warn)',
      );
  }
}

function shuttingDown(): Result {
  return { state: 'rejected', error: new SvcWebhookError('shutting_down', 'the receiver is shutting down', { retryAfter: 5 }), verifierSecrets: NO_SECRETS };
}

/** What the receiver answers for anything thrown: a SvcWebhookError as it is, anything else 500 `internal_error`. */
function refusal(err: unknown): SvcWebhookError {
  return isSvcWebhookError(err) ? err : new SvcWebhookError('internal_error', 'internal error', { cause: err });
}

/**
 * Direct mode: runs the handlers in the request, then records the delivery as done, or releases
 * its claim (failed), or keeps it held while handlers that outlived their deadline still run.
 * Throws the refusal (`handler_failed`, `handler_timeout`, or a transaction's own) to answer with.
 */
export async function runHandlersOf<R, S, D extends Delivery>(c: Claimed<R, S, D>): Promise<void> {
  const { arrival: r, delivery, settings, claim, verifierSecrets } = c;
  const { ctx, run: running } = dispatch({
    delivery,
    route: c.protocol.route,
    scope: { source: r.req, access: r.access, receivedAt: r.receivedAt, logger: settings.logger },
    secrets: verifierSecrets,
    // The deadline counts from arrival: the sender's 10 s include reading, verifying and claiming.
    deadlineMs: Math.max(1, settings.timeoutMs - (performance.now() - r.started)),
    claim,
    ...(r.trace === undefined ? {} : { wrap: (calls) => r.trace!.handlers(calls, delivery.id, delivery.kind, verifierSecrets) }),
  });
  const run = isThenable<RunResult>(running) ? await running : running;
  if (run.state === 'timed_out') {
    holdUntilSettled(claim, { settled: run.settled, abandonAfterMs: settings.abandonAfterMs, log: ctx.log });
    throw new SvcWebhookError('handler_timeout', `handlers did not finish within ${settings.timeoutMs} ms of the request's arrival`, {
      retryAfter: retryAfter(settings),
    });
  }
  if (run.state === 'failed') {
    const released = releaseClaim(claim);
    if (released !== undefined) await released;
    throw handlerFailure(run.error);
  }
  const committed = commitHandled(claim);
  if (committed !== undefined) await committed;
}

/**
 * Inbox mode: hands the delivery to the queue and records it as done; a queue that refuses it
 * (503 `inbox_unavailable`) has its claim released, so that svc's retry may enqueue it.
 */
export async function enqueue<R, S, D extends Delivery>(c: Claimed<R, S, D>, handoff: Handoff<D>): Promise<void> {
  const { arrival: r } = c;
  try {
    await handoff({ delivery: c.delivery, body: c.body, request: r.facts, receivedAt: r.receivedAt, trace: r.trace?.carrier() });
  } catch (err) {
    const released = releaseClaim(c.claim);
    if (released !== undefined) await released;
    throw err;
  }
  commitEnqueued(c.claim);
}
