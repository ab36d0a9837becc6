import pino from 'pino';
import type { BoardDelivery } from '../../../src/internal/delivery/delivery';
import { HandlerRegistry, boardRoute, type BoardHandlers } from '../../../src/route/delivery-route';
import type { DeliveryScope } from '../../../src/route/delivery-route';
import type { BoardHandler } from '../../../src/route/handler-types';
import { boardDelivery } from '../../../src/validate/board-delivery';

const NOW = 1_772_366_400_000;
const TS = NOW / 1000;
const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';

function handlers(): BoardHandlers {
  return { byType: new HandlerRegistry<BoardHandler<never>>(), any: [] };
}

function delivered(overrides: Record<string, unknown> = {}): BoardDelivery {
  const payload = { id: ID, type: 'task.created', sequence: 7, board: { id: 'b-1', name: 'B' }, task: { id: 't1' }, ...overrides };
  return boardDelivery(payload, { request: { headers: {} }, verified: { by: undefined, timestamp: TS }, nowMs: NOW });
}

function contextOf(route: ReturnType<typeof boardRoute>, delivery: BoardDelivery): DeliveryScope {
  return route.context(delivery, { deliveryId: delivery.id, kind: delivery.kind, receivedAt: NOW, logger: pino({ level: 'silent' }) });
}

describe('the board route', () => {
  it('runs the handlers of its type, then onAny, each with the event and the context', async () => {
    const h = handlers();
    const order: string[] = [];
    const seen: unknown[] = [];
    const record =
      (name: string) =>
      (e: unknown, ctx: unknown): void => {
        order.push(name);
        seen.push(e, ctx);
      };
    h.any.push(record('any'));
    h.byType.add('task.created', record('type'), () => undefined);
    h.byType.add('task.deleted', record('other type'), () => undefined);
    const route = boardRoute(h);
    const delivery = delivered();
    const ctx = contextOf(route, delivery);
    for (const call of route.calls(delivery, ctx)) await call();
    expect(order).toEqual(['type', 'any']);
    expect(seen).toEqual([delivery.event, ctx, delivery.event, ctx]);
  });

  it('runs onAny alone when its type has no handlers', async () => {
    const h = handlers();
    const any = jest.fn();
    h.any.push(any);
    const route = boardRoute(h);
    const delivery = delivered();
    const calls = route.calls(delivery, contextOf(route, delivery));
    expect(calls).toHaveLength(1);
    await calls[0]!();
    expect(any).toHaveBeenCalledTimes(1);
  });

  it('gives the handlers a board context: webhook, type, event, timestamp, sequence and the verified board', () => {
    const route = boardRoute(handlers());
    const delivery = delivered();
    expect(contextOf(route, delivery)).toMatchObject({
      webhook: 'board',
      type: 'task.created',
      event: delivery.event,
      timestamp: TS,
      sequence: 7,
      deliveryId: ID,
      boardId: 'b-1',
    });
  });
});
