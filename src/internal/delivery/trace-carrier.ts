/**
 * A span's context as W3C Trace Context text, kept in an inbox job so that the worker's processing
 * span can link to the delivery's receive span. Plain data, apart from the OpenTelemetry module: the
 * types that carry it must not make `@opentelemetry/api` (an optional peer) a need of the typings.
 */
export interface TraceCarrier {
  readonly traceparent: string;
  readonly tracestate?: string;
}
