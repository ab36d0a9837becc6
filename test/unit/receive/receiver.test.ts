import pino from 'pino';
import { SvcWebhookError } from '../../../src/errors';
import type { DeliveryRecord } from '../../../src/route/handler-types';
import { settings } from '../../../src/webhooks/webhook-settings';
import { boardEvent } from '../../../src/testing/example-events';
import { boardReceiver, NOW, accessOf, codeOf, deferred, requestOf, secret, settle, setup } from './receiver-harness';

afterEach(() => {
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
      const { send, access } = setup({ options: { maxBodyBytes: 300_000 } });
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
      jest.advanceTimersByTime(700);
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
      expect(
        lines()
          .filter((l) => l.msg === 'delivery received')
          .map((l) => l.outcome),
      ).toEqual(['handled', 'duplicate']);
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
      const receiver = boardReceiver(config);
      expect((await receiver.receive(requestOf(), accessOf())).status).toBe(200);
      await settle();
      expect(chunks.map((c) => JSON.parse(c).level)).toEqual([30]);
    });

    it('is claimed for the lease and committed with the claim token', async () => {
      const { send, store } = setup({ options: { leaseMs: 30_000 } });
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

    it("whose body could not be read is answered with the reader's refusal", async () => {
      const { receiver } = setup();
      const access = accessOf(async () => {
        throw new SvcWebhookError('body_too_large', 'too large');
      });
      const answer = await receiver.receive(requestOf(), access);
      expect([answer.status, codeOf(answer), answer.closeConnection]).toEqual([413, 'body_too_large', true]);
    });

    it.each([
      [
        'a forged body: unverified, its bytes kept, nothing parsed',
        (e: object) => requestOf(e, {}, 'a-forged-secret-0123456789abcdef'),
        401,
        'signature_mismatch',
        false,
        false,
      ],
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
      expect(record).toMatchObject({
        outcome: 'rejected',
        code: 'schema_violation',
        deliveryId: event.id,
        kind: 'task.created',
        verified: true,
        payload: event,
      });
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
      expect(warned).toEqual([
        expect.objectContaining({
          url: '/webhooks/board?q=1',
          problems: expect.arrayContaining([expect.objectContaining({ path: '/task/title' })]),
          err: expect.objectContaining({ code: 'schema_violation' }),
        }),
      ]);
    });

    it('under warn: an event on the schema is handled without a warning', async () => {
      const { send, lines } = setup({ options: { schemaPolicy: 'warn' } });
      await send();
      expect(lines().filter((l) => l.level === 40)).toEqual([]);
    });
  });

  describe('the de-dup claim', () => {
    it('held by an earlier attempt still running: 409 delivery_in_progress, retry after the handler timeout in whole seconds', async () => {
      const { send, on } = setup({ options: { timeoutMs: 2500 } });
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

  it('answers on the path it was configured with', () => {
    const { receiver } = setup({ options: { path: '/hooks/svc' } });
    expect(receiver.path).toBe('/hooks/svc');
    expect(receiver.pattern.path).toBe('/hooks/svc');
  });
});
