import pino from 'pino';
import type { DeliveryStore } from '../../../src/dedup/delivery-store';
import type { Outcome } from '../../../src/receive/receiver';
import { boardEvent } from '../../../src/testing/example-events';
import { accessOf, codeOf, deferred, recordingStore, requestOf, secret, settle, setup } from './receiver-harness';

afterEach(() => {
  jest.useRealTimers();
});

describe('the receiver', () => {
  describe('handlers past their deadline', () => {
    const fake = () => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });

    it('are answered 503 handler_timeout when the timeout passes, retry after it; their signal is aborted', async () => {
      fake();
      const { send, on } = setup({ options: { timeoutMs: 1500 } });
      let signal: AbortSignal | undefined;
      on('task.created', (_e, ctx) => {
        signal = ctx.signal;
        return new Promise(() => undefined);
      });
      let answer: Outcome | undefined;
      void send().then((o) => (answer = o));
      await jest.advanceTimersByTimeAsync(1499);
      expect(answer).toBeUndefined();
      expect(signal?.aborted).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      expect(answer).toStrictEqual({ status: 503, body: expect.any(String), retryAfter: 2 });
      expect(codeOf(answer!)).toBe('handler_timeout');
      expect(signal?.aborted).toBe(true);
    });

    it('have a deadline counted from the arrival of the request, not from when the handlers start', async () => {
      fake();
      const { receiver, on } = setup({ options: { timeoutMs: 1000 } });
      on('task.created', () => new Promise((resolve) => setTimeout(resolve, 500)));
      const access = accessOf((req) => new Promise((resolve) => setTimeout(() => resolve(req.body), 600)));
      const answer = receiver.receive(requestOf(), access);
      await jest.advanceTimersByTimeAsync(1000);
      expect(codeOf(await answer)).toBe('handler_timeout');
    });

    it('still get at least a millisecond when reading the request took the whole timeout', async () => {
      fake();
      const { receiver, on } = setup({ options: { timeoutMs: 1000 } });
      on('task.created', () => Promise.resolve());
      const access = accessOf((req) => new Promise((resolve) => setTimeout(() => resolve(req.body), 1500)));
      const answer = receiver.receive(requestOf(), access);
      await jest.advanceTimersByTimeAsync(1500);
      expect((await answer).status).toBe(200);
    });

    it('that finish in time are handled', async () => {
      fake();
      const { send, on } = setup({ options: { timeoutMs: 1000 } });
      on('task.created', () => new Promise((resolve) => setTimeout(resolve, 999)));
      const answer = send();
      await jest.advanceTimersByTimeAsync(999);
      expect((await answer).status).toBe(200);
    });

    it('keep the claim, renewed, until they finish; then the delivery is recorded as handled and close() resolves', async () => {
      fake();
      const { send, on, store, receiver, lines } = setup({ options: { timeoutMs: 1000, leaseMs: 3000 } });
      const gate = deferred();
      on('task.created', () => gate.promise);
      const event = boardEvent('task.created');
      const answer = send(requestOf(event));
      await jest.advanceTimersByTimeAsync(1000);
      expect((await answer).status).toBe(503);
      const token = (store.claim.mock.results[0]!.value as { token: string }).token;
      expect(store.extend).toHaveBeenCalledWith(event.id, token, 3000);
      expect(codeOf(await send(requestOf(event)))).toBe('delivery_in_progress');
      let closed = false;
      void receiver.close().then(() => (closed = true));
      await jest.advanceTimersByTimeAsync(1000);
      expect(store.extend).toHaveBeenCalledTimes(2);
      expect(closed).toBe(false);
      gate.resolve();
      await settle();
      expect(store.commit).toHaveBeenCalledWith(event.id, token);
      expect(store.release).not.toHaveBeenCalled();
      expect(closed).toBe(true);
      expect(lines().some((l) => l.level === 30 && l.deliveryId === event.id && l.msg !== 'delivery received')).toBe(true);
    });

    it('that fail later release the claim for the retry, logging the failure', async () => {
      fake();
      const { send, on, store, receiver, lines } = setup({ options: { timeoutMs: 1000 } });
      const gate = deferred();
      on('task.created', () => gate.promise);
      const event = boardEvent('task.created');
      const answer = send(requestOf(event));
      await jest.advanceTimersByTimeAsync(1000);
      await answer;
      gate.reject(new Error('late failure'));
      await settle();
      const token = (store.claim.mock.results[0]!.value as { token: string }).token;
      expect(store.release).toHaveBeenCalledWith(event.id, token);
      expect(store.commit).not.toHaveBeenCalled();
      expect(lines().filter((l) => l.level === 50 && l.deliveryId === event.id && l.err !== undefined && l.outcome === undefined)).toHaveLength(1);
      await receiver.close();
    });

    it('are given up after abandonAfter, counted from arrival: the claim is released and close() resolves', async () => {
      fake();
      const { receiver, on, store, lines } = setup({ options: { timeoutMs: 1000, abandonAfterMs: 5000 } });
      on('task.created', () => new Promise(() => undefined));
      const event = boardEvent('task.created');
      const access = accessOf((req) => new Promise((resolve) => setTimeout(() => resolve(req.body), 200)));
      const answer = receiver.receive(requestOf(event), access);
      await jest.advanceTimersByTimeAsync(1000);
      expect((await answer).status).toBe(503);
      let closed = false;
      void receiver.close().then(() => (closed = true));
      await jest.advanceTimersByTimeAsync(3999);
      expect([store.release.mock.calls.length, closed]).toEqual([0, false]);
      await jest.advanceTimersByTimeAsync(1);
      await settle();
      expect(store.release).toHaveBeenCalledTimes(1);
      expect(closed).toBe(true);
      expect(lines().find((l) => l.abandonAfterMs === 5000)).toMatchObject({ level: 50, deliveryId: event.id });
    });

    it('that finish after being abandoned are still recorded as handled', async () => {
      fake();
      const { send, on, store } = setup({ options: { timeoutMs: 1000, abandonAfterMs: 2000 } });
      const gate = deferred();
      on('task.created', () => gate.promise);
      const answer = send();
      await jest.advanceTimersByTimeAsync(2000);
      await answer;
      expect(store.release).toHaveBeenCalledTimes(1);
      gate.resolve();
      await settle();
      expect(store.commit).toHaveBeenCalledTimes(1);
    });

    it('count once in flight when they finish after being abandoned: close() still waits for a later delivery', async () => {
      fake();
      const { send, on, receiver } = setup({ options: { timeoutMs: 1000, abandonAfterMs: 2000 } });
      const gates = [deferred(), deferred()];
      let n = 0;
      on('task.created', () => gates[n++]!.promise);
      const abandoned = send();
      await jest.advanceTimersByTimeAsync(2000);
      await abandoned;
      gates[0]!.resolve();
      await settle();
      const later = send();
      await settle();
      let closed = false;
      void receiver.close().then(() => (closed = true));
      await settle();
      expect(closed).toBe(false);
      gates[1]!.resolve();
      expect((await later).status).toBe(200);
      await settle();
      expect(closed).toBe(true);
    });

    it('that fail after being abandoned are not released twice', async () => {
      fake();
      const { send, on, store, lines } = setup({ options: { timeoutMs: 1000, abandonAfterMs: 2000 } });
      const gate = deferred();
      on('task.created', () => gate.promise);
      const answer = send();
      await jest.advanceTimersByTimeAsync(2000);
      await answer;
      gate.reject(new Error('late'));
      await settle();
      expect(store.release).toHaveBeenCalledTimes(1);
      expect(lines().filter((l) => l.level === 50 && l.err !== undefined && l.outcome === undefined)).toHaveLength(1);
    });
  });

  describe('more', () => {
    it('close() waits for every delivery in flight, not only the first to finish', async () => {
      const { receiver, send, on } = setup();
      const gates = [deferred(), deferred()];
      let n = 0;
      on('task.created', () => gates[n++]!.promise);
      const first = send();
      const second = send();
      await settle();
      let closed = false;
      void receiver.close().then(() => (closed = true));
      gates[0]!.resolve();
      await first;
      await settle();
      expect(closed).toBe(false);
      gates[1]!.resolve();
      await second;
      await settle();
      expect(closed).toBe(true);
    });

    it("waits for a secret resolver's answer before it verifies", async () => {
      const { send } = setup({ options: { secret: async () => secret } });
      expect((await send()).status).toBe(200);
      expect(codeOf(await send(requestOf(boardEvent('task.created'), {}, 'a-forged-secret-0123456789abcdef')))).toBe('signature_mismatch');
    });

    it("binds the claim to the handlers' context: one handler may record the delivery in its transaction", async () => {
      const transaction = jest.fn(async (_id: string, _token: string, work: (tx: never) => unknown) => work('tx' as never));
      const chunks: string[] = [];
      const store = { ...recordingStore(), transaction } as unknown as DeliveryStore;
      const { send, on } = setup({ options: { store, logger: pino({ level: 'silent' }, { write: (c: string) => void chunks.push(c) }) } });
      const seen: unknown[] = [];
      on('task.created', (_e, ctx) => ctx.transaction(async (tx) => void seen.push(tx)));
      const event = boardEvent('task.created');
      expect((await send(requestOf(event))).status).toBe(200);
      expect(transaction).toHaveBeenCalledWith(event.id, expect.any(String), expect.any(Function));
      expect(seen).toEqual(['tx']);
    });

    it('refuses a transaction to a delivery with two handlers', async () => {
      const transaction = jest.fn(async () => undefined);
      const store = { ...recordingStore(), transaction } as unknown as DeliveryStore;
      const { send, on, any } = setup({ options: { store } });
      let refused: unknown;
      on('task.created', (_e, ctx) => ctx.transaction(async () => undefined).catch((err: unknown) => void (refused = err)));
      any(() => undefined);
      await send();
      expect(refused).toBeInstanceOf(TypeError);
      expect(transaction).not.toHaveBeenCalled();
    });

    it('stops renewing the claim of late handlers once they finish', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
      const { send, on, store } = setup({ options: { timeoutMs: 1000, leaseMs: 3000, abandonAfterMs: 5000 } });
      const gate = deferred();
      on('task.created', () => gate.promise);
      const answer = send();
      await jest.advanceTimersByTimeAsync(1000);
      await answer;
      gate.resolve();
      await settle();
      const renewals = store.extend.mock.calls.length;
      await jest.advanceTimersByTimeAsync(10_000);
      expect(store.extend).toHaveBeenCalledTimes(renewals);
      expect(store.release).not.toHaveBeenCalled();
    });

    it('records late handlers that finished, retrying a failing commit for two thirds of a lease, then gives up', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
      const { send, on, store, receiver, lines } = setup({ options: { timeoutMs: 1000, leaseMs: 3000 } });
      const gate = deferred();
      on('task.created', () => gate.promise);
      const answer = send();
      await jest.advanceTimersByTimeAsync(1000);
      await answer;
      store.commit.mockImplementation(() => {
        throw new Error('store away');
      });
      gate.resolve();
      await settle();
      expect(store.commit).toHaveBeenCalledTimes(1);
      let closed = false;
      void receiver.close().then(() => (closed = true));
      await jest.advanceTimersByTimeAsync(1999);
      expect([store.commit.mock.calls.length, closed]).toEqual([6, false]);
      await jest.advanceTimersByTimeAsync(1);
      await settle();
      expect([store.commit.mock.calls.length, closed]).toEqual([7, true]);
      await jest.advanceTimersByTimeAsync(10_000);
      expect(store.commit).toHaveBeenCalledTimes(7);
      expect(lines().filter((l) => l.level === 50 && l.err?.message === 'store away')).toHaveLength(1);
    });
  });
});
