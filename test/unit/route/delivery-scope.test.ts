import type { IncomingMessage } from 'node:http';
import pino from 'pino';
import type { DeliveryStore } from '../../../src/dedup/delivery-store';
import type { RequestAccess } from '../../../src/internal/request/request-access';
import { DeliveryScope } from '../../../src/route/delivery-route';
import { RequestScope } from '../../../src/internal/request/request-scope';

const SIGNATURE = `sha256=${'ab'.repeat(32)}`;

function capture() {
  const chunks: string[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void chunks.push(s) });
  return { logger, lines: (): Array<Record<string, any>> => chunks.map((c) => JSON.parse(c)) };
}

function scope(logger = pino({ level: 'silent' }), source: unknown = undefined, access: RequestAccess<never> | undefined = undefined) {
  return new DeliveryScope({ deliveryId: 'd-1', kind: 'task.created', source, access, receivedAt: 1234, logger });
}

function storeWith(transaction?: DeliveryStore['transaction']): DeliveryStore {
  return { claim: () => ({ state: 'done' }), commit: () => undefined, release: () => undefined, ...(transaction === undefined ? {} : { transaction }) };
}

describe("a handler's delivery context", () => {
  it('names its delivery, arrival and attempt (1 unless given), and an inbox gap when given', () => {
    const ctx = scope();
    expect([ctx.deliveryId, ctx.receivedAt, ctx.attempt, ctx.gap]).toEqual(['d-1', 1234, 1, undefined]);
    const retried = new DeliveryScope({ deliveryId: 'd-1', kind: 'k', receivedAt: 1, logger: pino({ level: 'silent' }), attempt: 3, gap: { from: 4, to: 5 } });
    expect([retried.attempt, retried.gap]).toEqual([3, { from: 4, to: 5 }]);
  });

  describe('log', () => {
    it('is a child logger bound to the delivery id and kind, made once', () => {
      const { logger, lines } = capture();
      const ctx = scope(logger);
      expect(ctx.log).toBe(ctx.log);
      ctx.log.info('hello');
      expect(lines()[0]).toMatchObject({ deliveryId: 'd-1', kind: 'task.created', msg: 'hello' });
    });

    it('drops the secrets it is given to drop, and signatures, from its lines', () => {
      const { logger, lines } = capture();
      const ctx = scope(logger);
      DeliveryScope.dropFromLog(ctx, ['the-board-secret-0123456789']);
      ctx.log.info({ value: 'x the-board-secret-0123456789 x', sig: SIGNATURE }, 'line');
      expect(JSON.stringify(lines())).not.toContain('the-board-secret-0123456789');
      expect(JSON.stringify(lines())).not.toContain(SIGNATURE);
    });

    it('with no secrets to drop is a plain child of the logger it was given', () => {
      const { logger, lines } = capture();
      const ctx = scope(logger);
      DeliveryScope.dropFromLog(ctx, []);
      ctx.log.info({ sig: SIGNATURE }, 'line');
      expect(lines()[0]!.sig).toBe(SIGNATURE);
    });
  });

  describe('signal', () => {
    it('is not aborted until the deadline passes, then aborted with a reason', () => {
      const ctx = scope();
      const signal = ctx.signal;
      expect(ctx.signal).toBe(signal);
      expect(signal.aborted).toBe(false);
      DeliveryScope.abort(ctx);
      expect(signal.aborted).toBe(true);
      expect(signal.reason).toBeInstanceOf(Error);
      expect(ctx.signal).toBe(signal);
    });

    it('read only after the deadline passed is already aborted', () => {
      const ctx = scope();
      DeliveryScope.abort(ctx);
      expect(ctx.signal.aborted).toBe(true);
      expect(ctx.signal.reason).toBeInstanceOf(Error);
    });
  });

  describe('transaction', () => {
    it("runs the work in the store's transaction, under the delivery id and the claim token", async () => {
      const transaction = jest.fn(async (_id: string, _token: string, work: (tx: never) => unknown) => work('tx' as never)) as unknown as NonNullable<
        DeliveryStore['transaction']
      >;
      const ctx = scope();
      DeliveryScope.bindClaim(ctx, { store: storeWith(transaction), token: 'tok', handlers: 1 });
      await expect(ctx.transaction(async (tx) => `done with ${String(tx)}`)).resolves.toBe('done with tx');
      expect(transaction).toHaveBeenCalledWith('d-1', 'tok', expect.any(Function));
    });

    it('is one per delivery: a second is refused', async () => {
      const ctx = scope();
      DeliveryScope.bindClaim(ctx, { store: storeWith(async () => 1 as never), token: 'tok', handlers: 1 });
      await ctx.transaction(() => 1);
      await expect(ctx.transaction(() => 1)).rejects.toBeInstanceOf(TypeError);
    });

    it.each([
      ['no delivery being handled', undefined],
      ['a delivery with two handlers', 2],
      ['a delivery with no handler', 0],
    ])('is refused for %s', async (_what, handlers) => {
      const ctx = scope();
      if (handlers !== undefined) DeliveryScope.bindClaim(ctx, { store: storeWith(async () => 1 as never), token: 'tok', handlers });
      await expect(ctx.transaction(() => 1)).rejects.toBeInstanceOf(TypeError);
    });

    it('is refused with a store without transactions', async () => {
      const ctx = scope();
      DeliveryScope.bindClaim(ctx, { store: storeWith(), token: 'tok', handlers: 1 });
      await expect(ctx.transaction(() => 1)).rejects.toBeInstanceOf(TypeError);
    });

    it('needs a context made by the library', () => {
      expect(() => DeliveryScope.takeTransaction({ deliveryId: 'd' } as never)).toThrow(TypeError);
      const ctx = scope();
      DeliveryScope.bindClaim(ctx, { store: storeWith(), token: 'tok', handlers: 1 });
      expect(DeliveryScope.takeTransaction(ctx)).toMatchObject({ token: 'tok', handlers: 1 });
    });
  });
});

describe('the request a handler sees', () => {
  const node = { method: 'POST' } as unknown as IncomingMessage;
  function accessFor() {
    return {
      nodeRequest: jest.fn(() => node),
      fetchRequest: jest.fn(() => new Request('http://localhost/x', { method: 'POST' })),
    } as unknown as RequestAccess<never> & { fetchRequest: jest.Mock; nodeRequest: jest.Mock };
  }

  it('is the Node request and a Fetch request, read from the source through its access; the Fetch request is made once', () => {
    const access = accessFor();
    const source = { id: 'source' };
    const ctx = new RequestScope(source, access);
    expect(ctx.req).toBe(node);
    expect(access.nodeRequest).toHaveBeenCalledWith(source);
    const request = ctx.request;
    expect(request).toBeInstanceOf(Request);
    expect(ctx.request).toBe(request);
    expect(access.fetchRequest).toHaveBeenCalledTimes(1);
    expect(access.fetchRequest).toHaveBeenCalledWith(source);
  });

  it('is neither without an access (an inbox worker, after the answer)', () => {
    const ctx = new RequestScope({}, undefined);
    expect([ctx.req, ctx.request]).toEqual([undefined, undefined]);
  });

  it('of a delivery is read the same way', () => {
    const access = accessFor();
    const ctx = scope(pino({ level: 'silent' }), { id: 'source' }, access);
    expect(ctx.req).toBe(node);
    expect(ctx.request).toBeInstanceOf(Request);
  });
});
