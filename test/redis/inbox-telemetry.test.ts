/**
 * OpenTelemetry across the inbox, with the real SDK: one delivery is followed from its receive span
 * to the span of each processing attempt in a worker, which links to it through the job in Redis.
 */
import { randomUUID } from 'node:crypto';
import { context, trace, SpanKind, SpanStatusCode, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { redisStore, svcBoardWebhook } from '../../src';
import { jobIdOf, type InboxJob } from '../../src/inbox/inbox-job';
import { DeliveryTelemetry } from '../../src/observe/telemetry';
import { silentLogger } from '../support/apps';
import { deliver, eventually, redisSuite, serve } from '../support/inbox';
import { BOARD_SECRET, fixture, signBoard } from '../support/sign';

const suite = redisSuite();
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });

function register(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(tracerProvider);
}

function unregister(): void {
  trace.disable();
  context.disable();
}

function spansOf(name: string, deliveryId: string): ReadableSpan[] {
  return spans.getFinishedSpans().filter((s) => s.name === name && s.attributes['messaging.message.id'] === deliveryId);
}

function sameSpan(a: SpanContext | undefined, b: SpanContext): boolean {
  return a?.traceId === b.traceId && a.spanId === b.spanId;
}

/**
 * A receiver and a worker of one board webhook in this process, on their own queue prefix; the
 * handler fails its first attempt, with an error that quotes the secret (a fixed one, or the
 * board's from a resolver).
 */
async function boardInbox(prefix: string, resolved = false) {
  const store = redisStore({ url: suite.redis.url, prefix: `${prefix}-ids:` });
  const secret = resolved ? () => BOARD_SECRET : BOARD_SECRET;
  const board = svcBoardWebhook({ secret, logger: silentLogger, store, inbox: { connection: suite.redis.url, prefix, retryDelayMs: 50 } }).onAny(
    (_event, ctx) => {
      if (ctx.attempt === 1) throw new Error(`transient, with ${BOARD_SECRET}`);
    },
  );
  const server = await serve(board);
  const worker = board.work({ stalledIntervalMs: 500, lockDurationMs: 1000 });
  suite.cleanups.push(
    () => store.close(),
    () => board.close(),
    () => server.close(),
    () => worker.close(),
  );
  return { url: `${server.url}/webhooks/board` };
}

/** The job of a delivery as the queue keeps it (processed jobs are kept for `keepProcessedFor`). */
async function jobData(prefix: string, deliveryId: string): Promise<InboxJob> {
  const connection = new Redis(suite.redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue<InboxJob>('board', { connection, prefix });
  try {
    const job = await queue.getJob(jobIdOf(deliveryId));
    if (job === undefined) throw new Error(`no job for ${deliveryId}`);
    return job.data;
  } finally {
    await queue.close();
    await connection.quit();
  }
}

describe('OpenTelemetry in inbox mode', () => {
  beforeEach(() => spans.reset());

  describe('with a tracer provider registered', () => {
    beforeAll(register);
    afterAll(unregister);

    it("links each processing attempt's span to the delivery's receive span, and runs the handlers in child spans of it", async () => {
      const prefix = `o${randomUUID().slice(0, 8)}`;
      const { url } = await boardInbox(prefix);
      const event = fixture('board', 'task.created');
      expect((await deliver(url, signBoard(event))).status).toBe(200);
      await eventually(() => spansOf('svc.webhook.process', event.id).length === 2, 10_000, 'the second attempt');

      const [receive] = spansOf('svc.webhook.receive', event.id);
      expect(receive!.attributes['svc.webhook.outcome']).toBe('enqueued');
      const attempts = spansOf('svc.webhook.process', event.id).sort(
        (a, b) => Number(a.attributes['svc.webhook.attempt']) - Number(b.attributes['svc.webhook.attempt']),
      );
      for (const [index, span] of attempts.entries()) {
        expect(span.kind).toBe(SpanKind.CONSUMER);
        // Each attempt is a trace of its own (hours may pass before a retry), linked to the receive span.
        expect(span.parentSpanContext).toBeUndefined();
        expect(span.spanContext().traceId).not.toBe(receive!.spanContext().traceId);
        expect(span.links).toHaveLength(1);
        expect(sameSpan(span.links[0]!.context, receive!.spanContext())).toBe(true);
        expect(span.attributes).toMatchObject({
          'messaging.system': 'svc',
          'messaging.operation.type': 'process',
          'messaging.operation.name': 'process',
          'messaging.destination.name': 'board',
          'messaging.message.id': event.id,
          'svc.webhook': 'board',
          'svc.webhook.kind': 'task.created',
          'svc.webhook.attempt': index + 1,
        });
        const handlers = spans.getFinishedSpans().filter((s) => s.name === 'svc.webhook.handler' && s.parentSpanContext?.spanId === span.spanContext().spanId);
        expect(handlers).toHaveLength(1);
        expect(handlers[0]!.spanContext().traceId).toBe(span.spanContext().traceId);
      }
      expect(attempts[0]!.attributes).toMatchObject({ 'svc.webhook.outcome': 'retried', 'svc.webhook.code': 'handler_failed', 'error.type': 'handler_failed' });
      expect(attempts[0]!.status.code).toBe(SpanStatusCode.ERROR);
      expect(attempts[1]!.attributes['svc.webhook.outcome']).toBe('processed');
      expect(attempts[1]!.attributes['svc.webhook.code']).toBeUndefined();
      expect(attempts[1]!.status.code).toBe(SpanStatusCode.UNSET);
      // The job carries the receive span's context as W3C Trace Context, readable by a worker in any process.
      const { traceId, spanId } = receive!.spanContext();
      expect((await jobData(prefix, event.id)).trace).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
    });

    it.each([
      ['a fixed secret', false],
      ['a secret resolver', true],
    ])("records a failed attempt's error on its handler span without the board's secret (%s)", async (_name, resolved) => {
      const prefix = `s${randomUUID().slice(0, 8)}`;
      const { url } = await boardInbox(prefix, resolved);
      const event = fixture('board', 'task.created');
      expect((await deliver(url, signBoard(event))).status).toBe(200);
      await eventually(() => spansOf('svc.webhook.process', event.id).length === 2, 10_000, 'the second attempt');

      const first = spansOf('svc.webhook.process', event.id).find((s) => s.attributes['svc.webhook.attempt'] === 1)!;
      const [handler] = spans.getFinishedSpans().filter((s) => s.name === 'svc.webhook.handler' && s.parentSpanContext?.spanId === first.spanContext().spanId);
      expect(handler!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'transient, with [Redacted]' });
      expect(handler!.events[0]!.attributes?.['exception.message']).toBe('transient, with [Redacted]');
      expect(JSON.stringify(spans.getFinishedSpans().map((s) => [s.status, s.attributes, s.events]))).not.toContain(BOARD_SECRET);
    });

    it('starts a processing span without a link when the job carries no trace context, or one that does not parse', () => {
      const telemetry = new DeliveryTelemetry('board');
      for (const receivedIn of [undefined, { traceparent: 'not-a-traceparent' }, { traceparent: `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01` }]) {
        telemetry.process({ deliveryId: 'd-1', kind: 'task.created', attempt: 1, receivedIn })!.end('processed');
      }
      const made = spansOf('svc.webhook.process', 'd-1');
      expect(made).toHaveLength(3);
      for (const span of made) expect(span.links).toEqual([]);
    });

    it('keeps the trace state of the receive span in the link', () => {
      const traceparent = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
      new DeliveryTelemetry('board')
        .process({ deliveryId: 'd-2', kind: 'task.created', attempt: 1, receivedIn: { traceparent, tracestate: 'vendor=value' } })!
        .end('processed');
      const [span] = spansOf('svc.webhook.process', 'd-2');
      expect(span!.links[0]!.context).toMatchObject({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1, isRemote: true });
      expect(span!.links[0]!.context.traceState?.get('vendor')).toBe('value');
    });
  });

  describe('with no provider registered', () => {
    beforeAll(unregister);

    it('keeps no trace context in the job and starts no processing span', async () => {
      const prefix = `n${randomUUID().slice(0, 8)}`;
      const { url } = await boardInbox(prefix);
      const event = fixture('board', 'task.created');
      expect((await deliver(url, signBoard(event))).status).toBe(200);
      await eventually(async () => (await jobData(prefix, event.id).catch(() => undefined)) !== undefined, 10_000, 'the job');
      expect((await jobData(prefix, event.id)).trace).toBeUndefined();
      expect(new DeliveryTelemetry('board').process({ deliveryId: event.id, kind: 'task.created', attempt: 1, receivedIn: undefined })).toBeUndefined();
      expect(spans.getFinishedSpans()).toHaveLength(0);
    });
  });
});
