import * as otel from '@opentelemetry/api';
import pino from 'pino';
import type { DeliveryRecord } from '../../../src/internal/delivery/delivery-record';
import { DeliveryReport } from '../../../src/observe/delivery-report';
import { DeliveryTrace, type DeliveryEnd } from '../../../src/observe/telemetry';

const delivery = { id: '0f8fad5b-d9cb-469f-a165-70867728950e', kind: 'task.updated', payload: { type: 'task.updated' } };

function reportWith(listeners: Array<(r: DeliveryRecord) => void> = []) {
  const chunks: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void chunks.push(s) });
  const report = new DeliveryReport({ webhook: 'board', logger, lineLogger: logger, listeners, errorHandlers: [], now: () => 0 });
  return { report, lines: () => chunks.map((c) => JSON.parse(c) as Record<string, unknown>) };
}

describe('the report of an ignored delivery', () => {
  it('ends the delivery trace with outcome ignored, why, status 200, the id and the kind', () => {
    const end = jest.fn<void, [DeliveryEnd]>();
    const { report } = reportWith();
    report.answered({ state: 'ignored', ignored: 'bot', delivery, durationMs: 1.5, receivedAt: 7, inbox: false, trace: { end } as unknown as DeliveryTrace });
    expect(end.mock.calls).toEqual([[{ outcome: 'ignored', ignored: 'bot', status: 200, deliveryId: delivery.id, kind: 'task.updated' }]]);
  });

  it('writes one line at debug, and in inbox mode still no queue outcome (it was never enqueued)', async () => {
    const records: DeliveryRecord[] = [];
    const { report, lines } = reportWith([(r) => records.push(r)]);
    report.answered({ state: 'ignored', ignored: 'rule', delivery, durationMs: 2, receivedAt: 7, inbox: true, trace: undefined });
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 20,
        msg: 'delivery ignored',
        deliveryId: delivery.id,
        kind: 'task.updated',
        outcome: 'ignored',
        ignored: 'rule',
        status: 200,
        durationMs: 2,
      }),
    ]);
    expect(lines()[0]).not.toHaveProperty('queue');
    await new Promise((r) => setImmediate(r));
    expect(records).toEqual([
      {
        deliveryId: delivery.id,
        kind: 'task.updated',
        outcome: 'ignored',
        ignored: 'rule',
        status: 200,
        durationMs: 2,
        webhook: 'board',
        receivedAt: 7,
        verified: true,
        payload: delivery.payload,
      },
    ]);
  });
});

describe('the telemetry of an ignored delivery', () => {
  function traced() {
    const attributes: Record<string, unknown> = {};
    const span = { setAttribute: jest.fn((k: string, v: unknown) => (attributes[k] = v)), setStatus: jest.fn(), end: jest.fn() };
    const tracer = { startSpan: jest.fn(() => span) } as unknown as otel.Tracer;
    const added: Array<Record<string, unknown>> = [];
    const recorded: Array<Record<string, unknown>> = [];
    const instruments = {
      deliveries: { add: jest.fn((_n: number, labels: Record<string, unknown>) => added.push(labels)) },
      duration: { record: jest.fn((_s: number, labels: Record<string, unknown>) => recorded.push(labels)) },
    } as never;
    const trace = new DeliveryTrace({ otel, webhook: 'board', tracer, instruments, secrets: [] });
    return { trace, attributes, span, added, recorded };
  }

  it('counts it in the deliveries metric by outcome ignored and why, and marks the span', () => {
    const { trace, attributes, span, added, recorded } = traced();
    trace.end({ outcome: 'ignored', ignored: 'self', status: 200, deliveryId: delivery.id, kind: 'task.updated' });
    const labels = {
      'svc.webhook': 'board',
      'svc.webhook.outcome': 'ignored',
      'svc.webhook.ignored': 'self',
      'http.response.status_code': 200,
      'svc.webhook.kind': 'task.updated',
    };
    expect(added).toEqual([labels]);
    expect(recorded).toEqual([labels]);
    expect(attributes).toMatchObject({ 'svc.webhook.outcome': 'ignored', 'svc.webhook.ignored': 'self', 'http.response.status_code': 200 });
    expect(span.setStatus).not.toHaveBeenCalled();
    expect(span.end).toHaveBeenCalledTimes(1);
  });

  it('labels other outcomes without svc.webhook.ignored', () => {
    const { trace, attributes, added } = traced();
    trace.end({ outcome: 'handled', status: 200, deliveryId: delivery.id, kind: 'task.updated' });
    expect(added[0]).not.toHaveProperty(['svc.webhook.ignored']);
    expect(attributes).not.toHaveProperty(['svc.webhook.ignored']);
  });
});
