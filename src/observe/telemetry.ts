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
import { boardEventTypes } from '../generated/board-types';
import { botEventKinds } from '../generated/bot-types';
import { NO_SECRETS, textScrubber } from '../internal/log-redaction';
import { safeError } from '../internal/safe-error';
import { isThenable } from '../internal/thenable';
/** One handler's call, as the router makes it. */
type HandlerCall = () => unknown;
import type { TraceCarrier } from './trace-carrier';

type Api = typeof OtelApi;
type Webhook = 'board' | 'bot';

const SCOPE = 'svc-webhooks';
export const SPAN_RECEIVE = 'svc.webhook.receive';
export const SPAN_HANDLER = 'svc.webhook.handler';
/** The inbox mode's processing attempt in a worker, linked to the delivery's receive span. */
export const SPAN_PROCESS = 'svc.webhook.process';
export const METRIC_DURATION = 'svc.webhook.delivery.duration';
export const METRIC_DELIVERIES = 'svc.webhook.deliveries';
/** Seconds; the messaging conventions' recommended boundaries, from 5 ms to 10 s (svc's deadline). */
export const DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/**
 * Where @opentelemetry/api 1.x keeps whatever is registered with it (providers, context manager,
 * propagator, diag logger). Until anything is, it is absent: one property read tells telemetry is off.
 */
const API_REGISTRY = Symbol.for('opentelemetry.js.api.1');

/** Event kinds that may be a metric label; any other kind a sender invents is counted as `other`. */
const KNOWN_KINDS = new Set<string>([...boardEventTypes, ...botEventKinds]);

// undefined: not tried yet; null: not installed (or failed to load), so telemetry stays off.
let api: Api | null | undefined;

function loadApi(): Api | null {
  if (api === undefined) {
    try {
      // A runtime require keeps the peer optional: a missing package only turns telemetry off.
      api = require('@opentelemetry/api') as Api;
    } catch {
      api = null;
    }
  }
  return api;
}

interface Instruments {
  readonly duration: OtelApi.Histogram;
  readonly deliveries: OtelApi.Counter;
}

/** The registered providers as last seen, shared by every receiver of the process. */
const current: {
  tracerProvider?: OtelApi.TracerProvider;
  tracer?: OtelApi.Tracer | undefined;
  meterProvider?: OtelApi.MeterProvider;
  instruments?: Instruments | undefined;
  noopTracerProvider?: OtelApi.TracerProvider;
} = {};

/** The tracer of the registered provider, or undefined when none is registered. */
function tracerOf(otel: Api): OtelApi.Tracer | undefined {
  const global = otel.trace.getTracerProvider();
  const provider = global instanceof otel.ProxyTracerProvider ? global.getDelegate() : global;
  if (provider !== current.tracerProvider) {
    current.noopTracerProvider ??= new otel.ProxyTracerProvider().getDelegate();
    current.tracerProvider = provider;
    current.tracer = provider === current.noopTracerProvider ? undefined : provider.getTracer(SCOPE);
  }
  return current.tracer;
}

/** The instruments of the registered meter provider, or undefined when none is registered. */
function instrumentsOf(otel: Api): Instruments | undefined {
  const provider = otel.metrics.getMeterProvider();
  if (provider !== current.meterProvider) {
    current.meterProvider = provider;
    const meter = provider.getMeter(SCOPE);
    current.instruments =
      meter === otel.createNoopMeter()
        ? undefined
        : {
            duration: meter.createHistogram(METRIC_DURATION, {
              description: 'Time from the arrival of a webhook request to its answer',
              unit: 's',
              advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
            }),
            deliveries: meter.createCounter(METRIC_DELIVERIES, {
              description: 'Webhook requests answered, by webhook, outcome and error code',
              unit: '{delivery}',
            }),
          };
  }
  return current.instruments;
}

/** How a delivery ended, as the receiver's answer tells it. */
export interface DeliveryEnd {
  readonly outcome: 'handled' | 'duplicate' | 'rejected' | 'enqueued';
  readonly status: number;
  readonly code?: string;
  /** The library's own message of a refusal (never a handler's). */
  readonly message?: string;
  readonly deliveryId?: string;
  readonly kind?: string;
}

/** The telemetry of one webhook (board or bot); `start` is called once per request. */
export class DeliveryTelemetry {
  private readonly otel: Api | null;

  /** `secrets`: the webhook's configured secrets, which a handler's error recorded on a span must not show. */
  constructor(
    private readonly webhook: Webhook,
    private readonly secrets: readonly string[] = NO_SECRETS,
  ) {
    this.otel = loadApi();
  }

  /** The trace of one delivery, or undefined (at no further cost) when no provider is registered. */
  start(): DeliveryTrace | undefined {
    const otel = this.otel;
    if (otel === null || (globalThis as Record<symbol, unknown>)[API_REGISTRY] === undefined) return undefined;
    const tracer = tracerOf(otel);
    const instruments = instrumentsOf(otel);
    if (tracer === undefined && instruments === undefined) return undefined;
    return new DeliveryTrace(otel, this.webhook, tracer, instruments, this.secrets);
  }

  /**
   * The trace of one processing attempt in an inbox worker, linked to the receive span whose
   * context the job carries; undefined (at no further cost) when no tracer provider is registered.
   */
  process(attempt: ProcessAttempt): ProcessTrace | undefined {
    const otel = this.otel;
    if (otel === null || (globalThis as Record<symbol, unknown>)[API_REGISTRY] === undefined) return undefined;
    const tracer = tracerOf(otel);
    return tracer === undefined ? undefined : new ProcessTrace(otel, this.webhook, tracer, attempt, this.secrets);
  }
}

/**
 * A receive span's context as an enqueued delivery keeps it: W3C Trace Context, so that a worker in
 * any process (with any propagator configured, or none) can link to it.
 */
export type { TraceCarrier };

/** What a processing span says of its attempt. */
export interface ProcessAttempt {
  readonly deliveryId: string;
  readonly kind: string;
  /** 1 for the first run, then 2, 3 … on retries. */
  readonly attempt: number;
  /** The receive span's context, kept in the job. */
  readonly receivedIn: TraceCarrier | undefined;
}

/** One delivery's span and metric points. */
export class DeliveryTrace {
  private readonly span: OtelApi.Span | undefined;
  /** The context handlers run in: the delivery span's. */
  private readonly context: OtelApi.Context | undefined;
  private readonly started = performance.now();

  constructor(
    private readonly otel: Api,
    private readonly webhook: Webhook,
    private readonly tracer: OtelApi.Tracer | undefined,
    private readonly instruments: Instruments | undefined,
    private readonly secrets: readonly string[],
  ) {
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
   * `hidden`: the secrets of the board (bot) that verified the delivery, with a secret resolver.
   */
  handlers(calls: HandlerCall[], deliveryId: string, kind: string, hidden: readonly string[]): HandlerCall[] {
    const { tracer, context: parent } = this;
    if (tracer === undefined || parent === undefined) return calls;
    return handlerSpans(this.otel, tracer, parent, this.webhook, calls, { deliveryId, kind, secrets: [...this.secrets, ...hidden] });
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
    instruments.duration.record((performance.now() - this.started) / 1000, labels);
    instruments.deliveries.add(1, labels);
  }
}

/**
 * One processing attempt of an enqueued delivery: a span of its own trace, started when the
 * worker runs the handlers, with a link to the receive span (hours may lie between them, and every
 * retry is another attempt, so the receive span is not made its parent). Handlers run in child spans.
 */
export class ProcessTrace {
  private readonly span: OtelApi.Span;
  private readonly context: OtelApi.Context;

  constructor(
    private readonly otel: Api,
    private readonly webhook: Webhook,
    private readonly tracer: OtelApi.Tracer,
    private readonly attempt: ProcessAttempt,
    private readonly secrets: readonly string[],
  ) {
    const received = spanContextOf(otel, attempt.receivedIn);
    const parent = otel.context.active();
    this.span = tracer.startSpan(
      SPAN_PROCESS,
      {
        kind: otel.SpanKind.CONSUMER,
        attributes: {
          ...messagingAttributes(webhook, 'process'),
          'messaging.message.id': attempt.deliveryId,
          'svc.webhook.kind': attempt.kind,
          'svc.webhook.attempt': attempt.attempt,
        },
        ...(received === undefined ? {} : { links: [{ context: received }] }),
      },
      parent,
    );
    this.context = otel.trace.setSpan(parent, this.span);
  }

  /** `hidden`: the secrets of the board (bot) that verified the delivery, with a secret resolver. */
  handlers(calls: HandlerCall[], hidden: readonly string[]): HandlerCall[] {
    return handlerSpans(this.otel, this.tracer, this.context, this.webhook, calls, { deliveryId: this.attempt.deliveryId, kind: this.attempt.kind, secrets: [...this.secrets, ...hidden] });
  }

  /** Ends the span with the attempt's outcome (`processed`, `retried`, `dead`) and, when it failed, the error code. */
  end(outcome: string, code?: string): void {
    try {
      this.span.setAttribute('svc.webhook.outcome', outcome);
      if (code !== undefined) {
        this.span.setAttribute('svc.webhook.code', code);
        this.span.setAttribute('error.type', code);
        this.span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: code });
      }
      this.span.end();
    } catch {
      // An SDK that throws has nowhere to report to; the attempt's outcome stands.
    }
  }
}

/** The messaging conventions' attributes, and the webhook, that every span of the library carries. */
function messagingAttributes(webhook: Webhook, operation: 'receive' | 'process'): OtelApi.Attributes {
  return { 'messaging.system': 'svc', 'messaging.operation.type': operation, 'messaging.operation.name': operation, 'messaging.destination.name': webhook, 'svc.webhook': webhook };
}

/** The span context a carrier describes, or undefined when it is absent or malformed. */
function spanContextOf(otel: Api, carrier: TraceCarrier | undefined): OtelApi.SpanContext | undefined {
  const found = typeof carrier?.traceparent === 'string' ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(carrier.traceparent) : null;
  if (found === null) return undefined;
  const context: OtelApi.SpanContext = { traceId: found[1]!, spanId: found[2]!, traceFlags: parseInt(found[3]!, 16), isRemote: true };
  if (typeof carrier!.tracestate === 'string') {
    try {
      context.traceState = otel.createTraceState(carrier!.tracestate);
    } catch {
      // A trace state that does not parse is left out; the link stands.
    }
  }
  return otel.trace.isSpanContextValid(context) ? context : undefined;
}

/** The delivery a handler span belongs to, and the secrets its recorded errors must not show. */
interface HandlerSpanOf {
  readonly deliveryId: string;
  readonly kind: string;
  readonly secrets: readonly string[];
}

/** Wraps each handler call in a child span of `parent`, ended when the handler settles. */
function handlerSpans(otel: Api, tracer: OtelApi.Tracer, parent: OtelApi.Context, webhook: Webhook, calls: HandlerCall[], { deliveryId, kind, secrets }: HandlerSpanOf): HandlerCall[] {
  return calls.map((call, index) => () => {
    const span = tracer.startSpan(
      SPAN_HANDLER,
      {
        attributes: {
          ...messagingAttributes(webhook, 'process'),
          'messaging.message.id': deliveryId,
          'svc.webhook.kind': kind,
          'svc.webhook.handler.index': index,
        },
      },
      parent,
    );
    let result: unknown;
    try {
      result = otel.context.with(otel.trace.setSpan(parent, span), call);
    } catch (err) {
      failed(otel, span, err, secrets);
      throw err;
    }
    if (!isThenable(result)) {
      span.end();
      return result;
    }
    return Promise.resolve(result).then(
      (value) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        failed(otel, span, err, secrets);
        throw err;
      },
    );
  });
}

/**
 * Records what a handler threw on its span, read through a safe copy (the value may be hostile),
 * its texts scrubbed as a log line's are: a span leaves the process as a log line does.
 */
function failed(otel: Api, span: OtelApi.Span, err: unknown, secrets: readonly string[]): void {
  const safe = safeError(err);
  const scrub = textScrubber(secrets);
  const message = scrub(safe.message);
  const code = (safe as { code?: unknown }).code;
  span.recordException({ name: safe.name, message, ...(safe.stack === undefined ? {} : { stack: scrub(safe.stack) }), ...(typeof code === 'string' ? { code: scrub(code) } : {}) });
  span.setAttribute('error.type', safe.name);
  span.setStatus({ code: otel.SpanStatusCode.ERROR, message });
  span.end();
}
