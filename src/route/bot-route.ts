import type { BotWebhookUpdate } from '../generated/bot-types';
import type { BotDelivery } from '../internal/delivery';
import { isObject } from '../internal/is-object';
import { DeliveryScope, type ScopeInit } from './delivery-scope';
import type { DeliveryRoute } from './delivery-route';
import type { HandlerRegistry } from './handler-registry';
import type { BotContext, BotHandler, CommandData } from './handler-types';
import type { HandlerCall } from './delivery-route';

/** The bot webhook's handlers: by event kind, by command name, and for every update. */
export interface BotHandlers {
  readonly byKind: HandlerRegistry<BotHandler<never>>;
  readonly byCommand: HandlerRegistry<BotHandler<CommandData>>;
  readonly any: BotHandler<never>[];
}

/** Routes a bot update to the handlers of its kind, of its command (a `messageCreate`), then of every kind. */
export function botRoute(handlers: BotHandlers): DeliveryRoute<BotDelivery> {
  return {
    context: (delivery, init) => new BotDeliveryContext(delivery, init),
    calls(delivery, ctx) {
      const call = (h: BotHandler<never>): HandlerCall => () => (h as BotHandler)(delivery.data, ctx as BotDeliveryContext);
      const calls = handlers.byKind.get(delivery.kind).map(call);
      const command = delivery.kind === 'messageCreate' ? commandName(delivery.data) : undefined;
      if (command !== undefined) calls.push(...handlers.byCommand.get(command).map(call as (h: BotHandler<CommandData>) => HandlerCall));
      for (const h of handlers.any) calls.push(call(h));
      return calls;
    },
  };
}

function commandName(data: Record<string, unknown>): string | undefined {
  const message = data.message;
  if (!isObject(message) || !isObject(message.command)) return undefined;
  return typeof message.command.name === 'string' ? message.command.name : undefined;
}

class BotDeliveryContext extends DeliveryScope implements BotContext {
  readonly webhook = 'bot' as const;
  readonly kind: string;
  readonly update: BotWebhookUpdate;
  readonly botId: string;

  constructor(delivery: BotDelivery, init: ScopeInit) {
    super(init);
    this.kind = delivery.kind;
    this.update = delivery.update;
    this.botId = delivery.botId;
  }
}
