/**
 * OpenTelemetry with the real SDK: an in-memory span exporter and a metric reader collected on demand,
 * registered as the global providers the way an application registers its SDK.
 */
import { context, metrics, trace, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { DataPointType, MeterProvider, MetricReader, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import express from 'express';
import { svcBoardWebhook, svcBotWebhook } from '../../src';
import { DURATION_BUCKETS, DeliveryTelemetry } from '../../src/observe/telemetry';
import { silentLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, BOT_SECRET, fixture, signBoard, signBot } from '../support/sign';

const BOARD_B_SECRET = 'the-secret-of-board-b-0123456789';
const LEAKED_SIGNATURE = `v1=${'ab'.repeat(32)}`;
const LEAKED_TOKEN = 'svc_bot_AAAAAAAAAAAAAAAAAAAAAAAA';

class CollectOnDemand extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

const spans = new InMemorySpanExporter();
const reader = new CollectOnDemand();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const meterProvider = new MeterProvider({ readers: [reader] });

function register(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
}

function unregister(): void {
  trace.disable();
  metrics.disable();
  context.disable();
}

function named(name: string): ReadableSpan[] {
  return spans.getFinishedSpans().filter((s) => s.name === name);
}

function receiveSpanOf(deliveryId: string): ReadableSpan {
  const found = named('svc.webhook.receive').filter((s) => s.attributes['messaging.message.id'] === deliveryId);
  expect(found).toHaveLength(1);
  return found[0]!;
}

function handlerSpansUnder(parent: ReadableSpan): ReadableSpan[] {
  return named('svc.webhook.handler').filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
}

async function collected(name: string): Promise<MetricData> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  if (metric === undefined) throw new Error(`no metric ${name} was collected`);
  return metric;
}

/** Spans end when handlers settle, which may be just after the answer. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('OpenTelemetry', () => {
  describe('with no provider registered', () => {
    beforeAll(unregister);

    it('starts no trace and records nothing per delivery', () => {
      expect(new DeliveryTelemetry('board').start()).toBeUndefined();
    });

    it('starts no trace either when the api holds something else, such as a context manager, but no provider', () => {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      try {
        expect(new DeliveryTelemetry('board').start()).toBeUndefined();
      } finally {
        context.disable();
      }
    });

    it('answers deliveries as usual', async () => {
      const app = express().use(svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger }).on('task.created', () => undefined));
      const res = await post(app, '/webhooks/board', signBoard(fixture('board', 'task.created')));
      expect(res.status).toBe(200);
    });
  });

  describe('with a tracer and a meter provider registered', () => {
    const userTracer = () => trace.getTracer('the-application');
    let seenInHandler: string | undefined;

    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger })
      .on('task.created', () => {
        // A span the application starts in a handler nests under that handler's span.
        const own = userTracer().startSpan('app.work');
        seenInHandler = own.spanContext().spanId;
        own.end();
      })
      .on('task.updated', async () => {
        await new Promise((r) => setTimeout(r, 5));
        throw new TypeError('the task was not found');
      })
      .on('task.restored', () => {
        // A handler's error may quote what it should not: the secret, a signature, a token.
        throw new Error(`cannot restore: secret ${BOARD_SECRET}, signature ${LEAKED_SIGNATURE}, token ${LEAKED_TOKEN}`);
      })
      .on('task.moved_in', () => {
        // An error's name is text a handler chose too: a library may build it from what it was given.
        const err = new Error('the move failed');
        err.name = `MoveError(${BOARD_SECRET}, ${LEAKED_TOKEN}, ${LEAKED_SIGNATURE})`;
        throw err;
      })
      .on('task.archived', () => {
        // Reading anything of this throws: recording it on the span must not.
        throw new Proxy(
          {},
          {
            get: () => {
              throw new Error('hostile');
            },
            getPrototypeOf: () => {
              throw new Error('hostile');
            },
          },
        );
      })
      .onAny(() => undefined);
    const bot = svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger }).on('messageCreate', () => undefined);
    // Boards bound each to its own secret: the board's secret is known only once its delivery verified.
    const resolved = svcBoardWebhook({ path: '/webhooks/boards', secret: () => BOARD_B_SECRET, logger: silentLogger }).on('task.restored', () => {
      throw new Error(`cannot restore with ${BOARD_B_SECRET}`);
    });
    // An HTTP server span around the middleware, as HTTP instrumentation would start.
    const app = express()
      .use((_req, _res, next) => {
        const server = userTracer().startSpan('GET /webhooks', { kind: SpanKind.SERVER });
        serverSpan = server;
        context.with(trace.setSpan(context.active(), server), next);
      })
      .use(board)
      .use(bot)
      .use(resolved);
    let serverSpan: Span | undefined;

    beforeAll(register);
    afterAll(unregister);
    beforeEach(() => spans.reset());

    it('gives a handled delivery a receive span with the webhook, id, kind, outcome and status, under the active span', async () => {
      const event = fixture('board', 'task.created');
      expect((await post(app, '/webhooks/board', signBoard(event))).status).toBe(200);

      const span = receiveSpanOf(event.id);
      expect(span.kind).toBe(SpanKind.CONSUMER);
      expect(span.attributes).toEqual({
        'messaging.system': 'svc',
        'messaging.operation.type': 'receive',
        'messaging.operation.name': 'receive',
        'messaging.destination.name': 'board',
        'messaging.message.id': event.id,
        'svc.webhook': 'board',
        'svc.webhook.kind': 'task.created',
        'svc.webhook.outcome': 'handled',
        'http.response.status_code': 200,
      });
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
      expect(span.parentSpanContext?.spanId).toBe(serverSpan!.spanContext().spanId);
    });

    it("runs each handler in a child span, and the application's own spans nest under it", async () => {
      const event = fixture('board', 'task.created');
      expect((await post(app, '/webhooks/board', signBoard(event))).status).toBe(200);

      const receive = receiveSpanOf(event.id);
      const handlers = handlerSpansUnder(receive);
      expect(handlers.map((h) => h.attributes['svc.webhook.handler.index']).sort()).toEqual([0, 1]); // .on and .onAny
      for (const h of handlers) {
        expect(h.attributes).toMatchObject({ 'messaging.operation.type': 'process', 'messaging.message.id': event.id, 'svc.webhook.kind': 'task.created' });
        expect(h.status.code).toBe(SpanStatusCode.UNSET);
      }
      const own = named('app.work').find((s) => s.spanContext().spanId === seenInHandler)!;
      expect(own.parentSpanContext?.spanId).toBe(handlers.find((h) => h.attributes['svc.webhook.handler.index'] === 0)!.spanContext().spanId);
    });

    it("records a handler's error on its span, and the refusal on the receive span", async () => {
      const event = fixture('board', 'task.updated');
      expect((await post(app, '/webhooks/board', signBoard(event))).status).toBe(500);

      const receive = receiveSpanOf(event.id);
      expect(receive.attributes).toMatchObject({
        'svc.webhook.outcome': 'rejected',
        'svc.webhook.code': 'handler_failed',
        'error.type': 'handler_failed',
        'http.response.status_code': 500,
      });
      expect(receive.status.code).toBe(SpanStatusCode.ERROR);
      const failed = handlerSpansUnder(receive).find((h) => h.attributes['svc.webhook.handler.index'] === 0)!;
      expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the task was not found' });
      expect(failed.attributes['error.type']).toBe('TypeError');
      expect(failed.events.map((e) => [e.name, e.attributes?.['exception.type'], e.attributes?.['exception.message']])).toEqual([
        ['exception', 'TypeError', 'the task was not found'],
      ]);
    });

    it("records a handler's error without the webhook's secret, a signature or a token in it, as its log lines do", async () => {
      const event = fixture('board', 'task.restored');
      expect((await post(app, '/webhooks/board', signBoard(event))).status).toBe(500);

      const failed = handlerSpansUnder(receiveSpanOf(event.id))[0]!;
      const expected = `cannot restore: secret [Redacted], signature v1=[Redacted], token svc_bot_…[redacted]`;
      expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: expected });
      expect(failed.events[0]!.attributes?.['exception.message']).toBe(expected);
      expect(failed.events[0]!.attributes?.['exception.stacktrace']).toMatch(
        /^Error: cannot restore: secret \[Redacted\], signature v1=\[Redacted\], token svc_bot_…\[redacted\]\n\s+at /,
      );
      const recorded = JSON.stringify([failed.status, failed.attributes, failed.events]);
      for (const leaked of [BOARD_SECRET, LEAKED_SIGNATURE.slice(3), LEAKED_TOKEN.slice('svc_bot_'.length)]) expect(recorded).not.toContain(leaked);
    });

    it("records a handler's error whose name holds the secret, a signature or a token without them, in error.type too", async () => {
      const event = fixture('board', 'task.moved_in');
      expect((await post(app, '/webhooks/board', signBoard(event))).status).toBe(500);

      const failed = handlerSpansUnder(receiveSpanOf(event.id)).find((h) => h.attributes['svc.webhook.handler.index'] === 0)!;
      const expected = 'MoveError([Redacted], svc_bot_…[redacted], v1=[Redacted])';
      expect(failed.attributes['error.type']).toBe(expected);
      expect(failed.events[0]!.attributes?.['exception.type']).toBe(expected);
      const recorded = JSON.stringify([failed.status, failed.attributes, failed.events]);
      for (const leaked of [BOARD_SECRET, LEAKED_SIGNATURE.slice(3), LEAKED_TOKEN.slice('svc_bot_'.length)]) expect(recorded).not.toContain(leaked);
    });

    it("records a handler's error without the secret of the board that verified the delivery, with a secret resolver", async () => {
      const event = fixture('board', 'task.restored');
      expect((await post(app, '/webhooks/boards', signBoard(event, { secret: BOARD_B_SECRET }))).status).toBe(500);

      const failed = handlerSpansUnder(receiveSpanOf(event.id))[0]!;
      expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'cannot restore with [Redacted]' });
      expect(JSON.stringify(failed.events)).not.toContain(BOARD_B_SECRET);
    });

    it('records a hostile thrown value without throwing itself', async () => {
      const event = fixture('board', 'task.archived');
      expect((await post(app, '/webhooks/board', signBoard(event))).status).toBe(500);

      const receive = receiveSpanOf(event.id);
      const failed = handlerSpansUnder(receive).find((h) => h.attributes['svc.webhook.handler.index'] === 0)!;
      expect(failed.status.code).toBe(SpanStatusCode.ERROR);
      expect(failed.events).toHaveLength(1);
    });

    it('gives a forged request a receive span with its code and status, and no id', async () => {
      const update = fixture('bot', 'messageCreate');
      expect((await post(app, '/webhooks/bot', signBot(update, { secret: 'not-the-bot-secret-0123456789abcd' }))).status).toBe(401);

      const refused = named('svc.webhook.receive').filter((s) => s.attributes['svc.webhook'] === 'bot');
      expect(refused).toHaveLength(1);
      expect(refused[0]!.attributes).toMatchObject({
        'svc.webhook.outcome': 'rejected',
        'svc.webhook.code': 'signature_mismatch',
        'error.type': 'signature_mismatch',
        'http.response.status_code': 401,
      });
      expect(refused[0]!.attributes['messaging.message.id']).toBeUndefined();
      expect(named('svc.webhook.handler')).toHaveLength(0);
    });

    it('marks a second send as a duplicate, with no handler span', async () => {
      const update = fixture('bot', 'messageCreate');
      const signed = signBot(update);
      expect((await post(app, '/webhooks/bot', signed)).status).toBe(200);
      spans.reset();
      expect((await post(app, '/webhooks/bot', signed)).status).toBe(200);

      expect(receiveSpanOf(update.id).attributes['svc.webhook.outcome']).toBe('duplicate');
      expect(named('svc.webhook.handler')).toHaveLength(0);
    });

    it('records the duration in a histogram with explicit buckets from 5 ms to 10 s, and counts by outcome and code', async () => {
      const known = fixture('board', 'task.created');
      const unknown = fixture('board', 'task.created', { type: 'task.teleported' });
      expect((await post(app, '/webhooks/board', signBoard(known))).status).toBe(200);
      expect((await post(app, '/webhooks/board', signBoard(unknown))).status).toBe(200);
      expect((await post(app, '/webhooks/board', signBoard(fixture('board', 'task.created'), { secret: 'not-the-board-secret-0123456789ab' }))).status).toBe(
        401,
      );
      await until(() => named('svc.webhook.receive').length === 3);

      const duration = await collected('svc.webhook.delivery.duration');
      expect(duration.descriptor.unit).toBe('s');
      expect(duration.dataPointType).toBe(DataPointType.HISTOGRAM);
      const points = duration.dataPoints as Array<{ attributes: Record<string, unknown>; value: Histogram }>;
      for (const p of points) expect(p.value.buckets.boundaries).toEqual(DURATION_BUCKETS);
      expect(DURATION_BUCKETS[0]).toBe(0.005);
      expect(DURATION_BUCKETS.at(-1)).toBe(10);

      const deliveries = await collected('svc.webhook.deliveries');
      const count = (attributes: Record<string, unknown>) =>
        deliveries.dataPoints.filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v)).reduce((n, p) => n + (p.value as number), 0);
      expect(count({ 'svc.webhook': 'board', 'svc.webhook.outcome': 'handled', 'svc.webhook.kind': 'task.created' })).toBeGreaterThanOrEqual(1);
      // A type the sender invents is not a label value of its own.
      expect(count({ 'svc.webhook.kind': 'task.teleported' })).toBe(0);
      expect(count({ 'svc.webhook': 'board', 'svc.webhook.outcome': 'handled', 'svc.webhook.kind': 'other' })).toBe(1);
      expect(
        count({ 'svc.webhook': 'board', 'svc.webhook.outcome': 'rejected', 'svc.webhook.code': 'signature_mismatch', 'http.response.status_code': 401 }),
      ).toBe(1);
      expect(count({ 'svc.webhook.outcome': 'rejected', 'svc.webhook.code': 'handler_failed' })).toBeGreaterThanOrEqual(1);

      // Bounded labels only: never a delivery id or a board.
      const labels = [...deliveries.dataPoints, ...points].flatMap((p) => Object.entries(p.attributes));
      expect(new Set(labels.map(([k]) => k))).toEqual(
        new Set(['svc.webhook', 'svc.webhook.outcome', 'svc.webhook.kind', 'svc.webhook.code', 'http.response.status_code']),
      );
      for (const [, v] of labels) expect([known.id, unknown.id, known.board.id, known.board.key]).not.toContain(v);
    });
  });

  describe('with providers registered after the receiver was made', () => {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger }).on('task.created', () => undefined);
    const app = express().use(board);

    afterAll(unregister);

    it('traces from the first delivery after the registration', async () => {
      unregister();
      spans.reset();
      const before = fixture('board', 'task.created');
      expect((await post(app, '/webhooks/board', signBoard(before))).status).toBe(200);
      expect(spans.getFinishedSpans()).toHaveLength(0);

      register();
      const after = fixture('board', 'task.created');
      expect((await post(app, '/webhooks/board', signBoard(after))).status).toBe(200);
      expect(receiveSpanOf(after.id).attributes['svc.webhook.outcome']).toBe('handled');
    });
  });
});
