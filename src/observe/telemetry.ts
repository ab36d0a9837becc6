/**
 * OpenTelemetry traces and metrics of the receiver, through `@opentelemetry/api` (an optional peer
 * dependency). The api is loaded on first use and only if installed; each delivery then asks it
 * whether a tracer or meter provider is registered, and does nothing more when neither is: one
 * property read per delivery while nothing at all is registered with the api, a few more otherwise. The application registers the providers (an SDK); the library never
 * depends on one.
 *
 * Conventions: the messaging semantic conventions' attributes (`messaging.system`,
 * `messaging.operation.*`, `messaging.destination.name`, `messaging.message.id`), `error.type` and
 * `http.response.status_code`, and this library's own under `svc.webhook.*`. Span names are fixed
 * (`svc.webhook.receive`, `svc.webhook.handler`) so they group in any backend whether or not an HTTP
 * server span surrounds them. Metric labels take bounded values only: never an id or a board.
 */
import type * as OtelApi from '@opentelemetry/api';
import { NO_SECRETS } from '../internal/logging/log-redaction';
import { handlerSpans, type HandlerCall } from './handler-spans';
import {
  API_REGISTRY,
  instrumentsOf,
  KNOWN_KINDS,
  loadApi,
  messagingAttributes,
  SPAN_RECEIVE,
  tracerOf,
  type Api,
  type Instruments,
  type Webhook,
} from './otel-api';
import { ProcessTrace, type ProcessAttempt } from './process-trace';
import type { TraceCarrier } from '../internal/delivery/trace-carrier';
import type { IgnoreReason } from '../internal/delivery/delivery-record';

export { SPAN_RECEIVE, SPAN_HANDLER, SPAN_PROCESS, METRIC_DURATION, METRIC_DELIVERIES, DURATION_BUCKETS } from './otel-api';
export { ProcessTrace, type ProcessAttempt } from './process-trace';
/** How a delivery ended, as the receiver's answer tells it. */
export interface DeliveryEnd {
  readonly outcome: 'handled' | 'duplicate' | 'rejected' | 'enqueued' | 'ignored' | 'parked';
  /** Why an `ignored` delivery was left out (`svc.webhook.ignored`: `self`, `bot` or `rule`). */
  readonly ignored?: IgnoreReason;
  readonly status: number;
  readonly code?: string;
  /** The library's own message of a refusal (never a handler's). */
  readonly message?: string;
  readonly deliveryId?: string;
  readonly kind?: string;
}

/** The telemetry of one webhook (board or bot); `start` is called once per request. */
export class DeliveryTelemetry {
  /** `secrets`: the webhook's configured secrets, which a handler's error recorded on a span must not show. */
  constructor(
    private readonly webhook: Webhook,
    private readonly secrets: readonly string[] = NO_SECRETS,
  ) {}

  /**
   * The api once something is registered with it: until then it is not even looked for, so that a
   * process without a provider loads nothing of OpenTelemetry (loadApi() caches what it finds).
   */
  private get otel(): Api | null {
    return (globalThis as Record<symbol, unknown>)[API_REGISTRY] === undefined ? null : loadApi();
  }

  /** The trace of one delivery, or undefined (at no further cost) when no provider is registered. */
  start(): DeliveryTrace | undefined {
    const otel = this.otel;
    if (otel === null) return undefined;
    const tracer = tracerOf(otel);
    const instruments = instrumentsOf(otel);
    if (tracer === undefined && instruments === undefined) return undefined;
    return new DeliveryTrace({ otel, webhook: this.webhook, tracer, instruments, secrets: this.secrets });
  }

  /**
   * The trace of one processing attempt in an inbox worker, linked to the receive span whose
   * context the job carries; undefined (at no further cost) when no tracer provider is registered.
   */
  process(attempt: ProcessAttempt): ProcessTrace | undefined {
    const otel = this.otel;
    if (otel === null) return undefined;
    const tracer = tracerOf(otel);
    return tracer === undefined ? undefined : new ProcessTrace({ otel, webhook: this.webhook, tracer, attempt, secrets: this.secrets });
  }
}

/**
 * A receive span's context as an enqueued delivery keeps it: W3C Trace Context, so that a worker in
 * any process (with any propagator configured, or none) can link to it.
 */
export type { TraceCarrier };

/** One delivery's span and metric points. */
export class DeliveryTrace {
  private readonly span: OtelApi.Span | undefined;
  /** The context handlers run in: the delivery span's. */
  private readonly context: OtelApi.Context | undefined;
  private readonly started = performance.now();

  private readonly otel: Api;
  private readonly webhook: Webhook;
  private readonly tracer: OtelApi.Tracer | undefined;
  private readonly instruments: Instruments | undefined;
  private readonly secrets: readonly string[];

  constructor(parts: { otel: Api; webhook: Webhook; tracer: OtelApi.Tracer | undefined; instruments: Instruments | undefined; secrets: readonly string[] }) {
    const { otel, webhook, tracer } = parts;
    this.otel = otel;
    this.webhook = webhook;
    this.tracer = tracer;
    this.instruments = parts.instruments;
    this.secrets = parts.secrets;
    if (tracer === undefined) return;
    // The parent is whatever is active: an HTTP server span when the application instruments HTTP.
    const parent = otel.context.active();
    this.span = tracer.startSpan(
      SPAN_RECEIVE,
      {
        kind: otel.SpanKind.CONSUMER,
        attributes: messagingAttributes(webhook, 'receive'),
      },
      parent,
    );
    this.context = otel.trace.setSpan(parent, this.span);
  }

  /**
   * The receive span's context, for the inbox to keep with the delivery: each processing attempt's
   * span links to it (`svc.webhook.process`).
   */
  carrier(): TraceCarrier | undefined {
    if (this.span === undefined) return undefined;
    const { traceId, spanId, traceFlags, traceState } = this.span.spanContext();
    const state = traceState?.serialize();
    const traceparent = `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
    return state === undefined || state === '' ? { traceparent } : { traceparent, tracestate: state };
  }

  /**
   * Each handler call runs in a child span of the delivery's, which ends when the handler settles.
   * `verifierSecrets`: the secrets of the board (bot) that verified the delivery, with a secret resolver.
   */
  handlers(calls: HandlerCall[], deliveryId: string, kind: string, verifierSecrets: readonly string[]): HandlerCall[] {
    const { tracer, context: parent } = this;
    if (tracer === undefined || parent === undefined) return calls;
    return handlerSpans({ otel: this.otel, tracer, context: parent, webhook: this.webhook }, calls, {
      deliveryId,
      kind,
      secrets: [...this.secrets, ...verifierSecrets],
    });
  }

  /** Ends the delivery span and records the metric points; a telemetry fault never changes the answer. */
  end(end: DeliveryEnd): void {
    try {
      this.record(end);
    } catch {
      // An SDK that throws has nowhere to report to; the delivery's answer is already decided.
    }
  }

  private record(end: DeliveryEnd): void {
    const kind = end.kind === undefined ? undefined : KNOWN_KINDS.has(end.kind) ? end.kind : 'other';
    const span = this.span;
    if (span !== undefined) {
      span.setAttribute('svc.webhook.outcome', end.outcome);
      span.setAttribute('http.response.status_code', end.status);
      if (end.deliveryId !== undefined) span.setAttribute('messaging.message.id', end.deliveryId);
      if (end.kind !== undefined) span.setAttribute('svc.webhook.kind', end.kind);
      if (end.ignored !== undefined) span.setAttribute('svc.webhook.ignored', end.ignored);
      if (end.code !== undefined) {
        span.setAttribute('svc.webhook.code', end.code);
        span.setAttribute('error.type', end.code);
        span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: end.message ?? end.code });
      }
      span.end();
    }
    const instruments = this.instruments;
    if (instruments === undefined) return;
    const labels: OtelApi.Attributes = { 'svc.webhook': this.webhook, 'svc.webhook.outcome': end.outcome, 'http.response.status_code': end.status };
    if (kind !== undefined) labels['svc.webhook.kind'] = kind;
    if (end.code !== undefined) labels['svc.webhook.code'] = end.code;
    if (end.ignored !== undefined) labels['svc.webhook.ignored'] = end.ignored;
    instruments.duration.record((performance.now() - this.started) / 1000, labels);
    instruments.deliveries.add(1, labels);
  }
}
