import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { RequestListener } from 'node:http';
import { createListener as svcNode } from './svc-node';

/**
 * svc-webhooks board as a node:http handler with the OpenTelemetry SDK registered as an application
 * would: every span recorded and batched, metrics aggregated and exported every 10 s. The exporters
 * drop what they get, so the figure is the library's and the SDK's work, not a collector's.
 */
const dropSpans: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => undefined };
const dropMetrics: PushMetricExporter = {
  export: (_metrics, done) => done({ code: 0 }),
  forceFlush: async () => undefined,
  shutdown: async () => undefined,
  selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
};

export function createListener(): RequestListener {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropSpans)] }));
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: dropMetrics, exportIntervalMillis: 10_000 })] }));
  return svcNode('board');
}
