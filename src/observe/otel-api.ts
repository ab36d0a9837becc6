import type * as OtelApi from '@opentelemetry/api';
import { boardEventTypes } from '../generated/board-types';
import { botEventKinds } from '../generated/bot-types';
import type { TraceCarrier } from '../internal/delivery/trace-carrier';

/** The `@opentelemetry/api` module. */
export type Api = typeof OtelApi;
export type Webhook = 'board' | 'bot';

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
export const API_REGISTRY = Symbol.for('opentelemetry.js.api.1');

/** Event kinds that may be a metric label; any other kind a sender invents is counted as `other`. */
export const KNOWN_KINDS = new Set<string>([...boardEventTypes, ...botEventKinds]);

// undefined: not tried yet; null: not installed (or failed to load), so telemetry stays off.
let api: Api | null | undefined;

export function loadApi(): Api | null {
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

export interface Instruments {
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
export function tracerOf(otel: Api): OtelApi.Tracer | undefined {
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
export function instrumentsOf(otel: Api): Instruments | undefined {
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

export function messagingAttributes(webhook: Webhook, operation: 'receive' | 'process'): OtelApi.Attributes {
  return {
    'messaging.system': 'svc',
    'messaging.operation.type': operation,
    'messaging.operation.name': operation,
    'messaging.destination.name': webhook,
    'svc.webhook': webhook,
  };
}

/** The span context a carrier describes, or undefined when it is absent or malformed. */
export function spanContextOf(otel: Api, carrier: TraceCarrier | undefined): OtelApi.SpanContext | undefined {
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
