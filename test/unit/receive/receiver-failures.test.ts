import pino from 'pino';
import { SvcWebhookError } from '../../../src/errors';
import type { ErrorContext } from '../../../src/route/handler-types';
import { settings } from '../../../src/webhooks/webhook-settings';
import { storeRefusal } from '../../../src/dedup/store-refusal';
import { boardEvent } from '../../../src/testing/example-events';
import { boardReceiver, accessOf, codeOf, commitRetriedBeforeClose, deferred, NOW, requestOf, secret, settle, setup } from './receiver-harness';

afterEach(() => {
  jest.useRealTimers();
});

describe('the receiver', () => {
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
      const line = lines().find((l) => l.code === 'handler_failed' && l.outcome === 'rejected');
      expect(line).toMatchObject({
        level: 50,
        status: 500,
        code: 'handler_failed',
        deliveryId: event.id,
        kind: 'task.created',
        outcome: 'rejected',
        err: expect.any(Object),
      });
      // A delivery whose handler failed was accepted: it is not written as a refusal.
      expect(line!.msg).not.toMatch(/refused/);
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
      await commitRetriedBeforeClose(setup());
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

  describe('a fault of its own', () => {
    it('a logger that throws: answered 500 internal_error, and nothing stays in flight', async () => {
      const throwing = pino({ level: 'info' }, { write: () => void 0 });
      throwing.info = () => {
        throw new Error('logger broke');
      };
      const config = settings({ secret, logger: throwing, now: () => NOW }, 'board');
      const receiver = boardReceiver({ ...config, lineLogger: throwing });
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
        const broken = {
          ...config,
          logger: Object.assign(Object.create(config.logger) as pino.Logger, {
            error: () => {
              throw new Error('logger broke');
            },
          }),
        };
        const failing = boardReceiver(broken, {
          listeners: [
            () => {
              throw new Error('listener broke');
            },
          ],
        });
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
      const { send } = setup({
        listeners: [() => void told.push('l1'), () => void told.push('l2')],
        errorHandlers: [() => void told.push('e1'), () => void told.push('e2')],
      });
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
      expect(line).toMatchObject({
        level: 40,
        status: 401,
        outcome: 'rejected',
        unverified: { deliveryId: event.id, event: 'task.created', boardId: event.board.id },
      });
      expect(line).not.toHaveProperty('err');
    });

    it('a fault here: one error line with the error', async () => {
      const { send, lines, store } = setup();
      store.claim.mockImplementationOnce(() => {
        throw new Error('down');
      });
      await send();
      expect(lines().find((l) => l.code === 'store_unavailable')).toMatchObject({
        level: 50,
        status: 503,
        outcome: 'rejected',
        err: expect.objectContaining({ code: 'store_unavailable' }),
      });
    });
  });
});
