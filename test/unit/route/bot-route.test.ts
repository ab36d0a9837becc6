import pino from 'pino';
import type { BotDelivery } from '../../../src/internal/delivery/delivery';
import { HandlerRegistry, botRoute, type BotHandlers } from '../../../src/route/delivery-route';
import type { DeliveryScope } from '../../../src/route/delivery-route';
import type { BotHandler, CommandData } from '../../../src/route/handler-types';
import { botDeliveryCheck } from '../../../src/validate/bot-delivery';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';

function handlers(): BotHandlers {
  return { byKind: new HandlerRegistry<BotHandler<never>>(), byCommand: new HandlerRegistry<BotHandler<CommandData>>(), any: [] };
}

function update(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: ID,
    botUserId: 'bot-1',
    createdAt: new Date(NOW - 1000).toISOString(),
    event: { messageCreate: { workspaceId: 'w', message: { id: 'm1', text: 'hi' } } },
    ...overrides,
  };
}

function deliveryOf(payload: Record<string, unknown>): BotDelivery {
  return botDeliveryCheck(60_000)(payload, { request: { headers: {} }, verified: { by: undefined }, nowMs: NOW });
}

function contextOf(route: ReturnType<typeof botRoute>, delivery: BotDelivery): DeliveryScope {
  return route.context(delivery, { deliveryId: delivery.id, kind: delivery.kind, receivedAt: NOW, logger: pino({ level: 'silent' }) });
}

const command = (name: unknown) => ({ workspaceId: 'w', message: { id: 'm1', text: '/x', command: { botUserId: 'bot-1', name, args: '' } } });

describe('the bot route', () => {
  it('runs the handlers of its kind, then its command handlers, then onAny, each with the data and the context', async () => {
    const h = handlers();
    const order: string[] = [];
    const seen: unknown[] = [];
    const record =
      (name: string) =>
      (data: unknown, ctx: unknown): void => {
        order.push(name);
        seen.push(data, ctx);
      };
    h.any.push(record('any'));
    h.byCommand.add('deploy', record('deploy'), () => undefined);
    h.byCommand.add('rollback', record('rollback'), () => undefined);
    h.byKind.add('messageCreate', record('kind'), () => undefined);
    h.byKind.add('taskCreate', record('other kind'), () => undefined);
    const route = botRoute(h);
    const delivery = deliveryOf(update({ event: { messageCreate: command('deploy') } }));
    const ctx = contextOf(route, delivery);
    for (const call of route.calls(delivery, ctx)) await call();
    expect(order).toEqual(['kind', 'deploy', 'any']);
    expect(seen).toEqual([delivery.data, ctx, delivery.data, ctx, delivery.data, ctx]);
  });

  it('runs command handlers only for messageCreate, not for another kind with a command-shaped message', () => {
    const h = handlers();
    h.byCommand.add('deploy', jest.fn(), () => undefined);
    const route = botRoute(h);
    const other = deliveryOf(update({ event: { messageUpdate: command('deploy') } }));
    expect(route.calls(other, contextOf(route, other))).toHaveLength(0);
  });

  it('runs no command handler for a message without a command, or whose command has no string name', () => {
    const h = handlers();
    h.byCommand.add('deploy', jest.fn(), () => undefined);
    const route = botRoute(h);
    for (const data of [{ workspaceId: 'w', message: { id: 'm1', command: null } }, { workspaceId: 'w', message: 'text' }, { workspaceId: 'w' }, command(7)]) {
      const delivery = deliveryOf(update({ event: { messageCreate: data } }));
      expect(route.calls(delivery, contextOf(route, delivery))).toHaveLength(0);
    }
  });

  it('gives the handlers a bot context: webhook, kind, update, delivery id and the verified bot', () => {
    const route = botRoute(handlers());
    const payload = update();
    const ctx = contextOf(route, deliveryOf(payload));
    expect(ctx).toMatchObject({ webhook: 'bot', kind: 'messageCreate', update: payload, deliveryId: ID, receivedAt: NOW, botId: 'bot-1' });
  });
});
