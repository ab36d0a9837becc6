import type { BoardWebhookEvent } from '../generated/board-types';
import type { BotWebhookUpdate } from '../generated/bot-types';
import type { BoardDelivery, BotDelivery, Delivery } from '../internal/delivery';
import { isObject } from '../internal/value-checks';
import { DeliveryScope, type ScopeInit } from './delivery-scope';
import { originOf, type Origin } from './origin';
import type { Awaitable, BoardContext, BoardHandler, BotContext, BotHandler, CommandData } from './handler-types';

/**
 * The route step: how each webhook picks the handlers of a checked delivery (by board event type;
 * by bot event kind and command name; for every delivery) and the context they get.
 */

/** How one webhook routes a checked delivery: the handlers' context, and the handlers it runs. */
export interface DeliveryRoute<D extends Delivery> {
  /** The handlers' context: `init` plus what this webhook adds. */
  context(delivery: D, init: ScopeInit): DeliveryScope;
  /** The handler calls for this delivery, in registration order. */
  calls(delivery: D, ctx: DeliveryScope): HandlerCall[];
}

/** One handler called with its event and context: what the run waits for. */
export type HandlerCall = () => Awaitable<unknown>;

/**
 * Handlers by key (an event type, an event kind or a command name), kept in registration order.
 * Lookups happen per delivery, so each key maps straight to its array.
 */
export class HandlerRegistry<H> {
  private readonly byKey = new Map<string, H[]>();

  /**
   * Registers `handler` for each key, once per key however often the list names it. Every key is
   * checked first: a refused registration registers nothing.
   */
  add(keys: string | readonly string[], handler: H, check: (key: string) => void): void {
    if (typeof handler !== 'function') throw new TypeError('svc-webhooks: a handler must be a function');
    const list = typeof keys === 'string' ? [keys] : Array.isArray(keys) ? keys : undefined;
    if (list === undefined || list.length === 0) throw new TypeError('svc-webhooks: name one key or a non-empty array of keys');
    const unique = new Set<string>(list);
    for (const key of unique) check(key);
    for (const key of unique) {
      const handlers = this.byKey.get(key);
      if (handlers === undefined) this.byKey.set(key, [handler]);
      else handlers.push(handler);
    }
  }

  get(key: string): readonly H[] {
    return this.byKey.get(key) ?? EMPTY;
  }
}

const EMPTY: readonly never[] = Object.freeze([]);

/** The board webhook's handlers: by event type, and for every event. */
export interface BoardHandlers {
  readonly byType: HandlerRegistry<BoardHandler<never>>;
  readonly any: BoardHandler<never>[];
}

/** Routes a board event to the handlers of its type, then to those of every type. */
export function boardRoute(handlers: BoardHandlers): DeliveryRoute<BoardDelivery> {
  return {
    context: (delivery, init) => new BoardDeliveryContext(delivery, init),
    calls(delivery, ctx) {
      const call =
        (h: BoardHandler<never>): HandlerCall =>
        () =>
          (h as BoardHandler)(delivery.event, ctx as BoardDeliveryContext);
      const own = handlers.byType.get(delivery.kind);
      return own.length === 0 ? handlers.any.map(call) : [...own.map(call), ...handlers.any.map(call)];
    },
  };
}

class BoardDeliveryContext extends DeliveryScope implements BoardContext {
  readonly webhook = 'board' as const;
  readonly type: string;
  readonly event: BoardWebhookEvent;
  readonly timestamp: number;
  readonly sequence: number;
  readonly boardId: string;

  constructor(delivery: BoardDelivery, init: ScopeInit) {
    super(init);
    this.type = delivery.kind;
    this.event = delivery.event;
    this.timestamp = delivery.timestamp;
    this.sequence = delivery.sequence;
    this.boardId = delivery.boardId;
  }

  // Read from the event when a handler asks: most never do, and a delivery pays nothing for it.
  get origin(): Origin {
    return originOf(this.event);
  }
}

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
      const call =
        (h: BotHandler<never>): HandlerCall =>
        () =>
          (h as BotHandler)(delivery.data, ctx as BotDeliveryContext);
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
