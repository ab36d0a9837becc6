import { SvcWebhookError } from '../../../src/errors';
import type { BoardDelivery } from '../../../src/internal/delivery/delivery';
import type { Outcome } from '../../../src/receive/receiver';
import type { Handoff } from '../../../src/inbox/accepted-delivery';
import { boardEvent } from '../../../src/testing/example-events';
import { commitRetriedBeforeClose, deferred, NOW, requestOf, settle, setup } from './receiver-harness';

// A scripted trace in place of OpenTelemetry's: what the receiver tells it, and the handler calls it wraps.
let mockTrace: { carrier: jest.Mock; handlers: jest.Mock; end: jest.Mock } | undefined;
jest.mock('../../../src/observe/telemetry', () => ({
  ...jest.requireActual('../../../src/observe/telemetry'),
  DeliveryTelemetry: class {
    start() {
      return mockTrace;
    }
  },
}));

afterEach(() => {
  mockTrace = undefined;
  jest.useRealTimers();
});

describe('the receiver', () => {
  describe('inbox mode', () => {
    it('hands the claimed delivery over with its body, request facts and arrival, records it and answers 200 enqueued', async () => {
      const handoff = jest.fn<Promise<void>, Parameters<Handoff<BoardDelivery>>>(async () => undefined);
      const listener = jest.fn();
      const { send, on, store, lines, access } = setup({ handoff, listeners: [listener] });
      const handler = jest.fn();
      on('task.created', handler);
      const event = boardEvent('task.created');
      const req = requestOf(event);
      expect(await send(req)).toEqual({ status: 200, body: '{"ok":true}' });
      expect(handler).not.toHaveBeenCalled();
      const [{ delivery, body, request: facts, receivedAt, trace }] = handoff.mock.calls[0]!;
      expect(delivery).toMatchObject({ id: event.id, kind: 'task.created', sequence: event.sequence });
      expect(Buffer.from(body).equals(req.body)).toBe(true);
      expect(facts).toBe(access.facts.mock.results[0]!.value);
      expect([receivedAt, trace]).toEqual([NOW, undefined]);
      expect(store.commit).toHaveBeenCalledWith(event.id, (store.claim.mock.results[0]!.value as { token: string }).token);
      expect(lines().find((l) => l.msg === 'delivery received')).toMatchObject({ outcome: 'enqueued', queue: 'enqueued', status: 200 });
      await settle();
      expect(listener.mock.calls[0][0]).toMatchObject({ outcome: 'enqueued', queue: 'enqueued' });
      expect((await send(requestOf(event))).body).toBe('{"ok":true,"duplicate":true}');
      expect(lines().filter((l) => l.msg === 'delivery received')[1]).toMatchObject({ outcome: 'duplicate', queue: 'duplicate' });
      expect(handoff).toHaveBeenCalledTimes(1);
    });

    it('a refusal has no queue outcome', async () => {
      const listener = jest.fn();
      const { send } = setup({ handoff: async () => undefined, listeners: [listener] });
      await send(requestOf(boardEvent('task.created'), { 'content-type': 'text/plain' }));
      await settle();
      expect(listener.mock.calls[0][0].queue).toBeUndefined();
    });

    it('a hand-over that fails is answered with its refusal; the claim is released first', async () => {
      const { send, store } = setup({ handoff: async () => Promise.reject(new SvcWebhookError('inbox_unavailable', 'redis away', { retryAfter: 5 })) });
      const release = deferred();
      store.release.mockImplementationOnce(() => release.promise);
      const event = boardEvent('task.created');
      let answer: Outcome | undefined;
      void send(requestOf(event)).then((o) => (answer = o));
      await settle();
      expect(store.release).toHaveBeenCalledWith(event.id, expect.any(String));
      expect(answer).toBeUndefined();
      release.resolve();
      await settle();
      expect(answer).toStrictEqual({ status: 503, body: expect.any(String), retryAfter: 5 });
      expect(store.commit).not.toHaveBeenCalled();
    });

    it('does not wait for a slow commit: the queue holds the delivery; close() waits for it', async () => {
      const { send, store, receiver } = setup({ handoff: async () => undefined });
      const commit = deferred();
      store.commit.mockImplementationOnce(() => commit.promise);
      expect((await send()).status).toBe(200);
      let closed = false;
      void receiver.close().then(() => (closed = true));
      await settle();
      expect(closed).toBe(false);
      commit.resolve();
      await settle();
      expect(closed).toBe(true);
    });

    it('retries a commit that failed at once in the background', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
      const { send, store, receiver } = setup({ handoff: async () => undefined });
      store.commit.mockImplementationOnce(() => {
        throw new Error('blink');
      });
      expect((await send()).status).toBe(200);
      let closed = false;
      void receiver.close().then(() => (closed = true));
      await jest.advanceTimersByTimeAsync(50);
      await settle();
      expect([store.commit.mock.calls.length, closed]).toEqual([2, true]);
    });

    it('retries a commit that failed later in the background', async () => {
      await commitRetriedBeforeClose(setup({ handoff: async () => undefined }));
    });
  });

  describe('tracing', () => {
    function trace() {
      mockTrace = { carrier: jest.fn(() => ({ traceparent: '00-aa-bb-01' })), handlers: jest.fn((calls: unknown[]) => calls), end: jest.fn() };
      return mockTrace;
    }

    it('runs the handlers as the trace wraps them, and ends it with the outcome', async () => {
      const t = trace();
      const { send, on } = setup();
      const handler = jest.fn();
      on('task.created', handler);
      const wrapped = jest.fn();
      t.handlers.mockImplementationOnce(() => [wrapped]);
      const event = boardEvent('task.created');
      await send(requestOf(event));
      expect(t.handlers).toHaveBeenCalledWith([expect.any(Function)], event.id, 'task.created', []);
      expect(wrapped).toHaveBeenCalledTimes(1);
      expect(handler).not.toHaveBeenCalled();
      expect(t.end).toHaveBeenCalledWith({ outcome: 'handled', status: 200, deliveryId: event.id, kind: 'task.created' });
    });

    it('ends the trace of a refusal with its status, code and message', async () => {
      const t = trace();
      const { send } = setup();
      await send(requestOf(boardEvent('task.created'), { 'content-type': 'text/plain' }));
      expect(t.end).toHaveBeenCalledWith({
        outcome: 'rejected',
        status: 415,
        code: 'unsupported_media_type',
        message: expect.any(String),
        deliveryId: undefined,
        kind: undefined,
      });
    });

    it("hands the receive span's context over to the inbox", async () => {
      trace();
      const handoff = jest.fn(async () => undefined);
      const { send } = setup({ handoff });
      await send();
      expect(handoff.mock.calls[0]).toEqual([
        { delivery: expect.anything(), body: expect.anything(), request: expect.anything(), receivedAt: NOW, trace: { traceparent: '00-aa-bb-01' } },
      ]);
    });
  });
});
