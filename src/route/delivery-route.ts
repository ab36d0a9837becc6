import type { BoardWebhookEvent } from '../generated/board-types';
import type { BotWebhookUpdate } from '../generated/bot-types';
import type { BoardDelivery, BotDelivery, Delivery, SequenceGap } from '../internal/delivery/delivery';
import { childDropping, NO_SECRETS } from '../internal/logging/log-redaction';
import type { WebhookLogger } from '../internal/logging/logger';
import type { RequestAccess } from '../internal/request/request-access';
import { RequestScope } from '../internal/request/request-scope';
import type { SqlClient } from '../internal/connections/sql-client';
import { isObject } from '../internal/checks/value-checks';
import { originOf, type Origin } from './origin';
import type { Awaitable, BoardContext, BoardHandler, BotContext, BotHandler, CommandData, DeliveryContext } from './handler-types';

/**
 * The route step: the context a delivery's handlers get (what every delivery has, and what each
 * webhook adds), and how each webhook picks the handlers of a checked delivery (by board event
 * type; by bot event kind and command name; for every delivery).
 */

/** The claim a delivery's handlers run under: what a transaction needs to record the delivery as done. */
export interface DeliveryClaim {
  /** The de-dup store, as far as a transaction needs it. */
  readonly store: { transaction?<T>(id: string, token: string, work: (client: SqlClient) => T | PromiseLike<T>): Promise<T> };
  readonly token: string;
  /** How many handlers this delivery runs. */
  readonly handlers: number;
}

/** What a delivery's context is made of. */
export interface ScopeInit {
  readonly deliveryId: string;
  readonly kind: string;
  /** The request and how to read it; both absent in an inbox worker, after the request was answered. */
  readonly source?: unknown;
  readonly access?: RequestAccess<never> | undefined;
  /** When the request arrived, in ms since the epoch. */
  readonly receivedAt: number;
  /** The webhook's logger; `ctx.log` is its child. */
  readonly logger: WebhookLogger;
  /** Which run of the handlers this is (inbox retries); default 1. */
  readonly attempt?: number;
  /** Board order in an inbox worker: the sequence numbers given up on before this event. */
  readonly gap?: SequenceGap | undefined;
}

/**
 * The part of a handler's context that every delivery has. The child logger and the AbortSignal
 * are made on first use: most handlers touch neither, and each costs more than the rest of routing.
 */
export class DeliveryScope extends RequestScope implements DeliveryContext {
  readonly #logger: WebhookLogger;
  readonly #kind: string;
  #log: WebhookLogger | undefined;
  #controller: AbortController | undefined;
  #aborted = false;
  #claim: DeliveryClaim | undefined;
  #transacted = false;
  #secrets: readonly string[] = NO_SECRETS;

  readonly deliveryId: string;
  readonly receivedAt: number;
  readonly attempt: number;
  readonly gap: SequenceGap | undefined;

  constructor(init: ScopeInit) {
    super(init.source, init.access);
    this.deliveryId = init.deliveryId;
    this.receivedAt = init.receivedAt;
    this.attempt = init.attempt ?? 1;
    this.gap = init.gap;
    this.#kind = init.kind;
    this.#logger = init.logger;
  }

  get log(): WebhookLogger {
    if (this.#log !== undefined) return this.#log;
    this.#log = childDropping(this.#logger, { deliveryId: this.deliveryId, kind: this.#kind }, this.#secrets);
    return this.#log;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined && this.#aborted) return AbortSignal.abort(deadlineReason());
    return (this.#controller ??= new AbortController()).signal;
  }

  transaction<T, Tx extends SqlClient = SqlClient>(work: (tx: Tx) => Awaitable<T>): Promise<T> {
    try {
      const { store, token } = DeliveryScope.takeTransaction(this);
      if (store.transaction === undefined)
        throw new TypeError("svc-webhooks: ctx.transaction needs a store with transactions (postgresStore); this webhook's store has none");
      return store.transaction<T>(this.deliveryId, token, work as (tx: SqlClient) => Awaitable<T>);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * With a secret resolver the parent logger cannot know every board's secret: the handlers' logger
   * drops the secrets of the board (or bot) this delivery was verified with. They are taken when the
   * delivery is, not when a handler first logs: by then they may have left the resolver's cache.
   */
  static dropFromLog(scope: DeliveryScope, secrets: readonly string[]): void {
    scope.#secrets = secrets;
  }

  /** Tells the handlers (through `signal`) that their deadline passed. */
  static abort(scope: DeliveryScope): void {
    scope.#aborted = true;
    scope.#controller?.abort(deadlineReason());
  }

  /** The one seam between the receiver and a handler's transaction: the claim the handlers run under. */
  static bindClaim(scope: DeliveryScope, claim: DeliveryClaim): void {
    scope.#claim = claim;
  }

  /**
   * The claim, for the one transaction that records this delivery as done. A second transaction,
   * or one beside other handlers, could record the delivery as done while other work of it still
   * fails, and that work would never be retried: both are refused.
   */
  static takeTransaction(scope: DeliveryContext): DeliveryClaim {
    const claim = scope instanceof DeliveryScope ? scope.#claim : undefined;
    if (!(scope instanceof DeliveryScope) || claim === undefined) throw new TypeError('svc-webhooks: this context belongs to no delivery being handled');
    if (claim.handlers !== 1) {
      throw new TypeError(
        `svc-webhooks: a transaction records the whole delivery as done, so it needs the delivery to have one handler; this one has ${claim.handlers}`,
      );
    }
    if (scope.#transacted) throw new TypeError('svc-webhooks: a delivery has one transaction; this handler already opened it');
    scope.#transacted = true;
    return claim;
  }
}

function deadlineReason(): Error {
  return new Error('handler deadline passed');
}

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
