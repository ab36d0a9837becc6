import type { IncomingMessage } from 'node:http';
import pino from 'pino';
import type { ClaimResult, DeliveryStore } from '../../src/dedup/delivery-store';
import { memoryStore } from '../../src/dedup/memory-store';
import { SvcWebhookError } from '../../src/errors';
import type { BoardWebhookOptions } from '../../src/options';
import type { DeliveryRecord, ErrorContext, ErrorHandler } from '../../src/route/handler-types';
import { settings } from '../../src/options';
import { boardProtocol, type BoardDelivery } from '../../src/receive/board-protocol';
import { storeRefusal } from '../../src/receive/handler-failure';
import { Receiver, type Handoff, type Outcome } from '../../src/receive/receiver';
import type { RequestAccess } from '../../src/receive/request-access';
import { HandlerRegistry } from '../../src/route/handler-registry';
import type { BoardContext, BoardHandler } from '../../src/route/handler-types';
import { boardEvent } from '../../src/testing/example-events';
import { signBoardEvent } from '../../src/testing/sign-delivery';

// A scripted trace in place of OpenTelemetry's: what the receiver tells it, and the handler calls it wraps.
let mockTrace: { carrier: jest.Mock; handlers: jest.Mock; end: jest.Mock } | undefined;
jest.mock('../../src/observe/telemetry', () => ({
  ...jest.requireActual('../../src/observe/telemetry'),
  DeliveryTelemetry: class {
    start() {
      return mockTrace;
    }
  },
}));

const secret = 'receiver-secret-0123456789abcdef';
const NOW = 1_772_366_400_000;

/** A framework-free request: headers, path, the body's bytes and whether they were all read. */
interface FakeRequest {
  readonly headers: Record<string, string>;
  readonly url: string;
  readonly body: Buffer;
  complete: boolean;
  readonly node: IncomingMessage;
}

function accessOf(read: (req: FakeRequest, limit: number) => Promise<Buffer> = async (req) => req.body) {
  const access = {
    facts: jest.fn((req: FakeRequest) => ({ headers: req.headers, url: req.url })),
    url: jest.fn((req: FakeRequest) => `${req.url}?q=1`),
    readBody: jest.fn(async (req: FakeRequest, limit: number) => {
      const body = await read(req, limit);
      req.complete = true;
      return body;
    }),
    complete: jest.fn((req: FakeRequest) => req.complete),
    nodeRequest: jest.fn((req: FakeRequest) => req.node),
    fetchRequest: jest.fn((req: FakeRequest) => new Request(`http://localhost${req.url}`, { method: 'POST' })),
  };
  return access satisfies RequestAccess<FakeRequest>;
}

function requestOf(event: object | string = boardEvent('task.created'), change: Record<string, string | undefined> = {}, key = secret): FakeRequest {
  const signed = signBoardEvent(event, { secret: key, timestamp: NOW / 1000 });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) headers[name.toLowerCase()] = value;
  for (const [name, value] of Object.entries(change)) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  return { headers, url: '/webhooks/board', body: Buffer.from(signed.body), complete: false, node: { marker: 'node request' } as unknown as IncomingMessage };
}

/** A store that does what the memory store does, each call recorded and replaceable. */
function recordingStore() {
  const inner = memoryStore();
  return {
    claim: jest.fn((id: string, leaseMs: number): ClaimResult | Promise<ClaimResult> => inner.claim(id, leaseMs)),
    commit: jest.fn((id: string, token: string): void | Promise<void> => inner.commit(id, token)),
    release: jest.fn((id: string, token: string): void | Promise<void> => inner.release(id, token)),
    extend: jest.fn((id: string, token: string, leaseMs: number): void | Promise<void> => inner.extend(id, token, leaseMs)),
  } satisfies DeliveryStore;
}

interface Setup {
  options?: Partial<BoardWebhookOptions>;
  handoff?: Handoff<BoardDelivery>;
  listeners?: Array<(record: DeliveryRecord) => void>;
  errorHandlers?: ErrorHandler[];
}

function setup({ options = {}, handoff, listeners = [], errorHandlers = [] }: Setup = {}) {
  const chunks: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void chunks.push(s) });
  const store = recordingStore();
  const config = settings({ secret, logger, now: () => NOW, store, ...options }, 'board');
  const byType = new HandlerRegistry<BoardHandler<never>>();
  const any: BoardHandler<never>[] = [];
  const protocol = boardProtocol(config.secrets, config.pattern, config.toleranceSeconds, { byType, any });
  const receiver = new Receiver(protocol, config, errorHandlers, listeners, handoff);
  const access = accessOf();
  return {
    receiver,
    store,
    access,
    on(type: string, handler: (event: any, ctx: BoardContext<any>) => unknown) {
      byType.add(type, handler as BoardHandler<never>, () => undefined);
    },
    any(handler: (event: any, ctx: BoardContext<any>) => unknown) {
      any.push(handler as BoardHandler<never>);
    },
    send: (req: FakeRequest = requestOf(), through: RequestAccess<FakeRequest> = access) => receiver.receive(req, through),
    lines: (): Array<Record<string, any>> => chunks.map((c) => JSON.parse(c)),
  };
}

function codeOf(outcome: Outcome): string | undefined {
  return (JSON.parse(outcome.body) as { code?: string }).code;
}

/** Lets every queued promise callback run (observers are told after the answer). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

afterEach(() => {
  mockTrace = undefined;
  jest.useRealTimers();
});

describe('the receiver', () => {
  describe('a valid delivery', () => {
    it('is answered 200 {"ok":true} after its handlers ran with the event and the context', async () => {
      const { send, on } = setup();
      const handler = jest.fn();
      on('task.created', handler);
      const event = boardEvent('task.created');
      const req = requestOf(event);
      expect(await send(req)).toEqual({ status: 200, body: '{"ok":true}' });
      expect(handler).toHaveBeenCalledTimes(1);
      const [seen, ctx] = handler.mock.calls[0];
      expect(seen).toEqual(event);
      expect(ctx).toMatchObject({ webhook: 'board', type: 'task.created', deliveryId: event.id, receivedAt: NOW, attempt: 1 });
      expect(ctx.req).toBe(req.node);
      expect(ctx.request).toBeInstanceOf(Request);
    });

    it('reads the body within the configured limit', async () => {
      const { send, access } = setup({ options: { limit: 300_000 } });
      const req = requestOf();
      await send(req);
      expect(access.readBody).toHaveBeenCalledWith(req, 300_000);
    });

    it('logs one info line with its id, type, outcome, status and duration, and no queue', async () => {
      const { send, lines } = setup();
      const event = boardEvent('task.created');
      await send(requestOf(event));
      const line = lines().find((l) => l.outcome === 'handled');
      expect(line).toMatchObject({ level: 30, webhook: 'board', deliveryId: event.id, kind: 'task.created', status: 200, durationMs: expect.any(Number) });
      expect(line).not.toHaveProperty('queue');
    });

    it('measures its duration from arrival to answer, in ms to the microsecond', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
      const { receiver, lines } = setup();
      const access = accessOf((req) => new Promise((resolve) => setTimeout(() => resolve(req.body), 1250)));
      const answer = receiver.receive(requestOf(), access);
      await jest.advanceTimersByTimeAsync(1250);
      await answer;
      expect(lines().find((l) => l.outcome === 'handled')?.durationMs).toBe(1250);
    });

    it('is recorded as handled: a repeat is answered 200 with duplicate: true and runs no handler', async () => {
      const { send, on, lines } = setup();
      const handler = jest.fn();
      on('task.created', handler);
      const event = boardEvent('task.created');
      await send(requestOf(event));
      expect(await send(requestOf(event))).toEqual({ status: 200, body: '{"ok":true,"duplicate":true}' });
      expect(handler).toHaveBeenCalledTimes(1);
      expect(lines().filter((l) => l.msg === 'delivery received').map((l) => l.outcome)).toEqual(['handled', 'duplicate']);
      expect(lines().filter((l) => l.msg === 'delivery received')[1]).not.toHaveProperty('queue');
    });

    it('logs its line as an object without a queue member at all (what a log formatter sees)', async () => {
      const keys: string[][] = [];
      const logger = pino({ level: 'info', formatters: { log: (o: Record<string, unknown>) => (keys.push(Object.keys(o)), o) } }, { write: () => undefined });
      const { send } = setup({ options: { logger } });
      await send();
      expect(keys).toEqual([['deliveryId', 'kind', 'outcome', 'status', 'durationMs']]);
    });

    it('made without listeners tells none, and logs no failure', async () => {
      const chunks: string[] = [];
      const config = settings({ secret, logger: pino({ level: 'info' }, { write: (c: string) => void chunks.push(c) }), now: () => NOW }, 'board');
      const protocol = boardProtocol(config.secrets, config.pattern, config.toleranceSeconds, { byType: new HandlerRegistry(), any: [] });
      const receiver = new Receiver(protocol, config, []);
      expect((await receiver.receive(requestOf(), accessOf())).status).toBe(200);
      await settle();
      expect(chunks.map((c) => JSON.parse(c).level)).toEqual([30]);
    });

    it('is claimed for the lease and committed with the claim token', async () => {
      const { send, store } = setup({ options: { lease: 30_000 } });
      const event = boardEvent('task.created');
      await send(requestOf(event));
      expect(store.claim).toHaveBeenCalledWith(event.id, 30_000);
      const token = (store.claim.mock.results[0]!.value as { token: string }).token;
      expect(store.commit).toHaveBeenCalledWith(event.id, token);
      expect(store.release).not.toHaveBeenCalled();
    });

    it('waits for a store that answers with promises, and answers only once the commit is recorded', async () => {
      const { send, store } = setup();
      const commit = deferred();
      store.claim.mockImplementationOnce(async () => ({ state: 'claimed', token: 't-1' }));
      store.commit.mockImplementationOnce(() => commit.promise);
      let answered = false;
      const answer = send().then((o) => {
        answered = true;
        return o;
      });
      await settle();
      expect(store.commit).toHaveBeenCalledWith(expect.any(String), 't-1');
      expect(answered).toBe(false);
      commit.resolve();
      expect((await answer).status).toBe(200);
    });

    it('tells the delivery listeners what was handled', async () => {
      const listener = jest.fn();
      const { send } = setup({ listeners: [listener] });
      const event = boardEvent('task.created');
      await send(requestOf(event));
      await settle();
      expect(listener).toHaveBeenCalledTimes(1);
      expect(listener.mock.calls[0][0]).toEqual({
        webhook: 'board',
        deliveryId: event.id,
        kind: 'task.created',
        outcome: 'handled',
        status: 200,
        durationMs: expect.any(Number),
        queue: undefined,
        receivedAt: NOW,
        verified: true,
        payload: event,
      });
    });
  });

  describe('a refused request', () => {
    it.each([
      ['a Content-Type that is not JSON', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
      ['a content coding', { 'content-encoding': 'gzip' }, 415, 'content_encoding_unsupported'],
      ['no signature', { 'x-svc-signature': undefined }, 401, 'signature_missing'],
      ['a stale timestamp', { 'x-svc-timestamp': String(NOW / 1000 - 3600) }, 401, 'timestamp_out_of_tolerance'],
    ])('with %s is refused before its body is read, asking to close the connection', async (_what, change, status, code) => {
      const { send, access, store } = setup();
      const answer = await send(requestOf(boardEvent('task.created'), change));
      expect(answer).toStrictEqual({ status, body: expect.any(String), closeConnection: true });
      expect(JSON.parse(answer.body)).toEqual({ ok: false, code, message: expect.any(String) });
      expect(access.readBody).not.toHaveBeenCalled();
      expect(store.claim).not.toHaveBeenCalled();
    });

    it('whose body was read in full is answered without asking to close the connection', async () => {
      const { send } = setup();
      const answer = await send(requestOf(boardEvent('task.created'), {}, 'a-forged-secret-0123456789abcdef'));
      expect(answer).toStrictEqual({ status: 401, body: expect.any(String) });
      expect(codeOf(answer)).toBe('signature_mismatch');
    });

    it('whose body could not be read is answered with the reader\'s refusal', async () => {
      const { receiver } = setup();
      const access = accessOf(async () => {
        throw new SvcWebhookError('body_too_large', 'too large');
      });
      const answer = await receiver.receive(requestOf(), access);
      expect([answer.status, codeOf(answer), answer.closeConnection]).toEqual([413, 'body_too_large', true]);
    });

    it.each([
      ['a forged body: unverified, its bytes kept, nothing parsed', (e: object) => requestOf(e, {}, 'a-forged-secret-0123456789abcdef'), 401, 'signature_mismatch', false, false],
      ['a body that is not JSON: verified, its bytes kept, nothing parsed', () => requestOf('{"id":'), 400, 'invalid_json', true, false],
    ])('is recorded for the listeners: %s', async (_what, make, status, code, verified, named) => {
      const listener = jest.fn();
      const { send } = setup({ listeners: [listener] });
      const req = make(boardEvent('task.created'));
      await send(req);
      await settle();
      const record = listener.mock.calls[0][0] as DeliveryRecord;
      expect(record).toEqual({
        webhook: 'board',
        deliveryId: undefined,
        kind: undefined,
        outcome: 'rejected',
        status,
        code,
        message: expect.any(String),
        durationMs: expect.any(Number),
        queue: undefined,
        receivedAt: NOW,
        verified,
        body: req.body,
      });
      expect(record).not.toHaveProperty('payload');
      expect(named).toBe(false);
    });

    it('refused before its body was read is recorded unverified, without a body', async () => {
      const listener = jest.fn();
      const { send } = setup({ listeners: [listener] });
      await send(requestOf(boardEvent('task.created'), { 'content-type': 'text/plain' }));
      await settle();
      const record = listener.mock.calls[0][0] as DeliveryRecord;
      expect(record).toMatchObject({ outcome: 'rejected', status: 415, verified: false });
      expect(record).not.toHaveProperty('body');
      expect(record).not.toHaveProperty('payload');
      expect(record).not.toHaveProperty('problems');
    });
  });

  describe('the schema', () => {
    const offSchema = () => boardEvent('task.created', { task: { title: 42 as unknown as string } });

    it('under reject: 400 schema_violation, recorded with its problems, the payload and the delivery it names', async () => {
      const listener = jest.fn();
      const errorHandler = jest.fn();
      const { send, on } = setup({ listeners: [listener], errorHandlers: [errorHandler] });
      const handler = jest.fn();
      on('task.created', handler);
      const event = offSchema();
      const answer = await send(requestOf(event));
      await settle();
      expect([answer.status, codeOf(answer)]).toEqual([400, 'schema_violation']);
      expect(handler).not.toHaveBeenCalled();
      const record = listener.mock.calls[0][0] as DeliveryRecord;
      expect(record).toMatchObject({ outcome: 'rejected', code: 'schema_violation', deliveryId: event.id, kind: 'task.created', verified: true, payload: event });
      expect(record.problems).toContainEqual({ path: '/task/title', message: expect.any(String) });
      expect(errorHandler.mock.calls[0][1]).toMatchObject({ deliveryId: event.id, kind: 'task.created' });
    });

    it('under reject, naming no delivery when the payload cannot name one', async () => {
      const listener = jest.fn();
      const { send } = setup({ listeners: [listener] });
      const event = { ...offSchema(), sequence: -1 };
      await send(requestOf(event));
      await settle();
      expect(listener.mock.calls[0][0]).toMatchObject({ code: 'schema_violation', deliveryId: undefined, payload: event });
    });

    it('under skip: a delivery the protocol cannot read is refused without schema problems', async () => {
      const listener = jest.fn();
      const { send } = setup({ options: { schemaPolicy: 'skip' }, listeners: [listener] });
      const answer = await send(requestOf({ ...boardEvent('task.created'), sequence: -1 }));
      await settle();
      expect(codeOf(answer)).toBe('schema_violation');
      expect(listener.mock.calls[0][0]).not.toHaveProperty('problems');
    });

    it('under skip: an event off the schema is handled, and nothing is warned', async () => {
      const { send, lines } = setup({ options: { schemaPolicy: 'skip' } });
      expect((await send(requestOf(offSchema()))).status).toBe(200);
      expect(lines().filter((l) => l.level === 40)).toEqual([]);
    });

    it('under warn: handled, with a warning that lists the problems and the request URL', async () => {
      const { send, on, lines } = setup({ options: { schemaPolicy: 'warn' } });
      const handler = jest.fn();
      on('task.created', handler);
      expect((await send(requestOf(offSchema()))).status).toBe(200);
      expect(handler).toHaveBeenCalledTimes(1);
      const warned = lines().filter((l) => l.level === 40);
      expect(warned).toEqual([expect.objectContaining({ url: '/webhooks/board?q=1', problems: expect.arrayContaining([expect.objectContaining({ path: '/task/title' })]), err: expect.objectContaining({ code: 'schema_violation' }) })]);
    });

    it('under warn: an event on the schema is handled without a warning', async () => {
      const { send, lines } = setup({ options: { schemaPolicy: 'warn' } });
      await send();
      expect(lines().filter((l) => l.level === 40)).toEqual([]);
    });
  });

  describe('the de-dup claim', () => {
    it('held by an earlier attempt still running: 409 delivery_in_progress, retry after the handler timeout in whole seconds', async () => {
      const { send, on } = setup({ options: { timeout: 2500 } });
      const gate = deferred();
      on('task.created', () => gate.promise);
      const event = boardEvent('task.created');
      const first = send(requestOf(event));
      await settle();
      const second = await send(requestOf(event));
      expect(second).toStrictEqual({ status: 409, body: expect.any(String), retryAfter: 3 });
      expect(codeOf(second)).toBe('delivery_in_progress');
      gate.resolve();
      expect((await first).status).toBe(200);
    });

    it('answered busy under the default timeout: retry after 8 s', async () => {
      const { send, store } = setup();
      store.claim.mockReturnValueOnce({ state: 'busy' });
      expect((await send()).retryAfter).toBe(8);
    });

    it('answered done asynchronously: a duplicate', async () => {
      const { send, store } = setup();
      store.claim.mockResolvedValueOnce({ state: 'done' });
      expect((await send()).body).toBe('{"ok":true,"duplicate":true}');
    });

    it('refused by the store: 503 store_unavailable, retry after 5 s, nothing run', async () => {
      const { send, store, on } = setup();
      const handler = jest.fn();
      on('task.created', handler);
      store.claim.mockRejectedValueOnce(new Error('connection lost'));
      const answer = await send();
      expect([answer.status, codeOf(answer), answer.retryAfter]).toEqual([503, 'store_unavailable', 5]);
      expect(handler).not.toHaveBeenCalled();
    });
  });

  describe('handlers that fail', () => {
    it('are answered 500 handler_failed; the claim is released, so the retry runs them again', async () => {
      const { send, on, store, lines } = setup();
      let calls = 0;
      on('task.created', () => {
        calls++;
        if (calls === 1) throw new Error('boom');
      });
      const event = boardEvent('task.created');
      const first = await send(requestOf(event));
      expect([first.status, codeOf(first)]).toEqual([500, 'handler_failed']);
      const token = (store.claim.mock.results[0]!.value as { token: string }).token;
      expect(store.release).toHaveBeenCalledWith(event.id, token);
      expect(store.commit).not.toHaveBeenCalled();
      expect(lines().find((l) => l.msg === 'delivery refused')).toMatchObject({ level: 50, status: 500, code: 'handler_failed', deliveryId: event.id, kind: 'task.created', outcome: 'rejected', err: expect.any(Object) });
      expect((await send(requestOf(event))).status).toBe(200);
      expect(calls).toBe(2);
    });

    it("answer with the store's own refusal when it came from the handler's transaction", async () => {
      const { send, on } = setup();
      on('task.created', () => {
        throw storeRefusal(new SvcWebhookError('store_unavailable', 'the database is away', { retryAfter: 5 }));
      });
      const answer = await send();
      expect([answer.status, codeOf(answer), answer.retryAfter]).toEqual([503, 'store_unavailable', 5]);
    });

    it('are answered only once the release is done', async () => {
      const { send, on, store } = setup();
      const release = deferred();
      store.release.mockImplementationOnce(() => release.promise);
      on('task.created', async () => {
        throw new Error('boom');
      });
      let answered = false;
      const answer = send().then((o) => {
        answered = true;
        return o;
      });
      await settle();
      expect(store.release).toHaveBeenCalled();
      expect(answered).toBe(false);
      release.resolve();
      expect((await answer).status).toBe(500);
    });

    it('tell the error handlers, with the error and where it happened', async () => {
      const errorHandler = jest.fn<unknown, [SvcWebhookError, ErrorContext]>();
      const { send, on } = setup({ errorHandlers: [errorHandler] });
      on('task.created', () => {
        throw new Error('boom');
      });
      const event = boardEvent('task.created');
      const req = requestOf(event);
      await send(req);
      await settle();
      const [error, ctx] = errorHandler.mock.calls[0]!;
      expect(error).toMatchObject({ code: 'handler_failed', status: 500 });
      expect(ctx).toMatchObject({ webhook: 'board', deliveryId: event.id, kind: 'task.created' });
      expect(ctx.req).toBe(req.node);
      expect(ctx.request).toBeInstanceOf(Request);
      expect(typeof ctx.log.info).toBe('function');
    });
  });

  describe('a store that cannot record a handled delivery', () => {
    it('still answers 200 and keeps committing in the background; close() waits for it', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
      const { send, store, receiver } = setup();
      store.commit.mockImplementationOnce(() => {
        throw new Error('store blinked');
      });
      const answer = await send();
      expect(answer.status).toBe(200);
      expect(store.commit).toHaveBeenCalledTimes(1);
      let closed = false;
      void receiver.close().then(() => (closed = true));
      await settle();
      expect(closed).toBe(false);
      await jest.advanceTimersByTimeAsync(50);
      expect(store.commit).toHaveBeenCalledTimes(2);
      await settle();
      expect(closed).toBe(true);
    });

    it('that fails asynchronously: the same', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
      const { send, store, receiver } = setup();
      store.commit.mockRejectedValueOnce(new Error('store blinked'));
      expect((await send()).status).toBe(200);
      let closed = false;
      void receiver.close().then(() => (closed = true));
      await settle();
      expect(closed).toBe(false);
      await jest.advanceTimersByTimeAsync(50);
      await settle();
      expect([store.commit.mock.calls.length, closed]).toEqual([2, true]);
    });
  });

  describe('close()', () => {
    it('resolves at once with nothing in flight, and later requests are answered 503 shutting_down unread', async () => {
      const { receiver, send, access, on } = setup();
      const handler = jest.fn();
      on('task.created', handler);
      await receiver.close();
      const answer = await send();
      expect(answer).toStrictEqual({ status: 503, body: expect.any(String), retryAfter: 5, closeConnection: true });
      expect(codeOf(answer)).toBe('shutting_down');
      expect(access.readBody).not.toHaveBeenCalled();
      expect(handler).not.toHaveBeenCalled();
    });

    it('waits for the deliveries in flight', async () => {
      const { receiver, send, on } = setup();
      const gate = deferred();
      on('task.created', () => gate.promise);
      const answer = send();
      await settle();
      let closed = false;
      void receiver.close().then(() => (closed = true));
      await settle();
      expect(closed).toBe(false);
      gate.resolve();
      expect((await answer).status).toBe(200);
      await settle();
      expect(closed).toBe(true);
    });

    it('a request refused while closing does not count as in flight', async () => {
      const { receiver, send } = setup();
      await receiver.close();
      await send();
      await expect(receiver.close()).resolves.toBeUndefined();
    });

    it('is not held up by a request that was refused', async () => {
      const { receiver, send } = setup();
      await send(requestOf(boardEvent('task.created'), { 'content-type': 'text/plain' }));
      await receiver.close();
    });
  });

  describe('handlers past their deadline', () => {
    const fake = () => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });

    it('are answered 503 handler_timeout when the timeout passes, retry after it; their signal is aborted', async () => {
      fake();
      const { send, on } = setup({ options: { timeout: 1500 } });
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
      const { receiver, on } = setup({ options: { timeout: 1000 } });
      on('task.created', () => new Promise((resolve) => setTimeout(resolve, 500)));
      const access = accessOf((req) => new Promise((resolve) => setTimeout(() => resolve(req.body), 600)));
      const answer = receiver.receive(requestOf(), access);
      await jest.advanceTimersByTimeAsync(1000);
      expect(codeOf(await answer)).toBe('handler_timeout');
    });

    it('still get at least a millisecond when reading the request took the whole timeout', async () => {
      fake();
      const { receiver, on } = setup({ options: { timeout: 1000 } });
      on('task.created', () => Promise.resolve());
      const access = accessOf((req) => new Promise((resolve) => setTimeout(() => resolve(req.body), 1500)));
      const answer = receiver.receive(requestOf(), access);
      await jest.advanceTimersByTimeAsync(1500);
      expect((await answer).status).toBe(200);
    });

    it('that finish in time are handled', async () => {
      fake();
      const { send, on } = setup({ options: { timeout: 1000 } });
      on('task.created', () => new Promise((resolve) => setTimeout(resolve, 999)));
      const answer = send();
      await jest.advanceTimersByTimeAsync(999);
      expect((await answer).status).toBe(200);
    });

    it('keep the claim, renewed, until they finish; then the delivery is recorded as handled and close() resolves', async () => {
      fake();
      const { send, on, store, receiver, lines } = setup({ options: { timeout: 1000, lease: 3000 } });
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
      const { send, on, store, receiver, lines } = setup({ options: { timeout: 1000 } });
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
      expect(lines().filter((l) => l.level === 50 && l.deliveryId === event.id && l.err !== undefined && l.msg !== 'delivery refused')).toHaveLength(1);
      await receiver.close();
    });

    it('are given up after abandonAfter, counted from arrival: the claim is released and close() resolves', async () => {
      fake();
      const { receiver, on, store, lines } = setup({ options: { timeout: 1000, abandonAfter: 5000 } });
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
      const { send, on, store } = setup({ options: { timeout: 1000, abandonAfter: 2000 } });
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

    it('that fail after being abandoned are not released twice', async () => {
      fake();
      const { send, on, store, lines } = setup({ options: { timeout: 1000, abandonAfter: 2000 } });
      const gate = deferred();
      on('task.created', () => gate.promise);
      const answer = send();
      await jest.advanceTimersByTimeAsync(2000);
      await answer;
      gate.reject(new Error('late'));
      await settle();
      expect(store.release).toHaveBeenCalledTimes(1);
      expect(lines().filter((l) => l.level === 50 && l.err !== undefined && l.msg !== 'delivery refused')).toHaveLength(1);
    });
  });

  describe('a fault of its own', () => {
    it('a logger that throws: answered 500 internal_error, and nothing stays in flight', async () => {
      const throwing = pino({ level: 'info' }, { write: () => void 0 });
      throwing.info = () => {
        throw new Error('logger broke');
      };
      const config = settings({ secret, logger: throwing, now: () => NOW }, 'board');
      const protocol = boardProtocol(config.secrets, config.pattern, config.toleranceSeconds, { byType: new HandlerRegistry(), any: [] });
      const receiver = new Receiver(protocol, { ...config, lineLogger: throwing }, []);
      expect(await receiver.receive(requestOf(), accessOf())).toEqual({ status: 500, body: '{"ok":false,"code":"internal_error","message":"internal error"}' });
      await receiver.close();
    });

    it('anything thrown that is not a SvcWebhookError: 500 internal_error with it as the cause', async () => {
      const errorHandler = jest.fn();
      const thrown = new Error('not ours');
      const { send } = setup({ handoff: () => Promise.reject(thrown), errorHandlers: [errorHandler] });
      const answer = await send();
      await settle();
      expect([answer.status, codeOf(answer)]).toEqual([500, 'internal_error']);
      expect(errorHandler.mock.calls[0][0].cause).toBe(thrown);
    });
  });

  describe('observers', () => {
    it('a listener or error handler that throws or rejects is logged, never raised', async () => {
      const { send, lines } = setup({
        listeners: [
          () => {
            throw new Error('listener broke');
          },
        ],
        errorHandlers: [() => Promise.reject(new Error('handler broke'))],
      });
      expect((await send(requestOf(boardEvent('task.created'), { 'content-type': 'text/plain' }))).status).toBe(415);
      await settle();
      const errors = lines().filter((l) => l.level === 50);
      expect(errors).toHaveLength(2);
      expect(errors.map((l) => l.err.message).sort()).toEqual(['handler broke', 'listener broke']);
    });

    it('a failure the logger cannot report either is swallowed', async () => {
      const unhandled = jest.fn();
      process.on('unhandledRejection', unhandled);
      try {
        const { receiver } = setup();
        const chunks: string[] = [];
        const logger = pino({ level: 'info' }, { write: (s: string) => void chunks.push(s) });
        const config = settings({ secret, logger, now: () => NOW }, 'board');
        const broken = { ...config, logger: Object.assign(Object.create(config.logger) as pino.Logger, { error: () => { throw new Error('logger broke'); } }) };
        const protocol = boardProtocol(config.secrets, config.pattern, config.toleranceSeconds, { byType: new HandlerRegistry(), any: [] });
        const failing = new Receiver(protocol, broken, [], [() => { throw new Error('listener broke'); }]);
        expect((await failing.receive(requestOf(), accessOf())).status).toBe(200);
        await settle();
        expect(unhandled).not.toHaveBeenCalled();
        await receiver.close();
      } finally {
        process.off('unhandledRejection', unhandled);
      }
    });

    it('every listener and error handler is told, in turn', async () => {
      const told: string[] = [];
      const { send } = setup({ listeners: [() => void told.push('l1'), () => void told.push('l2')], errorHandlers: [() => void told.push('e1'), () => void told.push('e2')] });
      await send(requestOf(boardEvent('task.created'), { 'content-type': 'text/plain' }));
      await settle();
      expect(told).toEqual(['l1', 'l2', 'e1', 'e2']);
    });
  });

  describe('refusals in the log', () => {
    it("the sender's (or a forger's) doing: one warn line with what the request claimed, no stack", async () => {
      const { send, lines } = setup();
      const event = boardEvent('task.created');
      await send(requestOf(event, {}, 'a-forged-secret-0123456789abcdef'));
      const line = lines().find((l) => l.code === 'signature_mismatch');
      expect(line).toMatchObject({ level: 40, status: 401, outcome: 'rejected', unverified: { deliveryId: event.id, event: 'task.created', boardId: event.board.id } });
      expect(line).not.toHaveProperty('err');
    });

    it('a fault here: one error line with the error', async () => {
      const { send, lines, store } = setup();
      store.claim.mockImplementationOnce(() => {
        throw new Error('down');
      });
      await send();
      expect(lines().find((l) => l.code === 'store_unavailable')).toMatchObject({ level: 50, status: 503, outcome: 'rejected', err: expect.objectContaining({ code: 'store_unavailable' }) });
    });
  });

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
      const [delivery, body, facts, receivedAt, trace] = handoff.mock.calls[0]!;
      expect(delivery).toMatchObject({ id: event.id, kind: 'task.created', sequence: event.sequence });
      expect(body.equals(req.body)).toBe(true);
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
      jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
      const { send, store, receiver } = setup({ handoff: async () => undefined });
      store.commit.mockRejectedValueOnce(new Error('blink'));
      expect((await send()).status).toBe(200);
      let closed = false;
      void receiver.close().then(() => (closed = true));
      await settle();
      expect(closed).toBe(false);
      await jest.advanceTimersByTimeAsync(50);
      await settle();
      expect([store.commit.mock.calls.length, closed]).toEqual([2, true]);
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
      expect(t.handlers).toHaveBeenCalledWith([expect.any(Function)], event.id, 'task.created');
      expect(wrapped).toHaveBeenCalledTimes(1);
      expect(handler).not.toHaveBeenCalled();
      expect(t.end).toHaveBeenCalledWith({ outcome: 'handled', status: 200, deliveryId: event.id, kind: 'task.created' });
    });

    it('ends the trace of a refusal with its status, code and message', async () => {
      const t = trace();
      const { send } = setup();
      await send(requestOf(boardEvent('task.created'), { 'content-type': 'text/plain' }));
      expect(t.end).toHaveBeenCalledWith({ outcome: 'rejected', status: 415, code: 'unsupported_media_type', message: expect.any(String), deliveryId: undefined, kind: undefined });
    });

    it("hands the receive span's context over to the inbox", async () => {
      trace();
      const handoff = jest.fn(async () => undefined);
      const { send } = setup({ handoff });
      await send();
      expect(handoff.mock.calls[0]).toEqual([expect.anything(), expect.anything(), expect.anything(), NOW, { traceparent: '00-aa-bb-01' }]);
    });
  });

  it('answers on the path it was configured with', () => {
    const { receiver } = setup({ options: { path: '/hooks/svc' } });
    expect(receiver.path).toBe('/hooks/svc');
    expect(receiver.pattern.path).toBe('/hooks/svc');
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
      const { send, on, store } = setup({ options: { timeout: 1000, lease: 3000, abandonAfter: 5000 } });
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
      const { send, on, store, receiver, lines } = setup({ options: { timeout: 1000, lease: 3000 } });
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
