import type { BoardWebhookEvent } from '../generated/board-types';
import type { BoardDelivery } from '../internal/delivery';
import { DeliveryScope, type ScopeInit } from './delivery-scope';
import type { DeliveryRoute } from './delivery-route';
import type { HandlerRegistry } from './handler-registry';
import type { BoardContext, BoardHandler } from './handler-types';
import type { HandlerCall } from './delivery-route';

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
      const call = (h: BoardHandler<never>): HandlerCall => () => (h as BoardHandler)(delivery.event, ctx as BoardDeliveryContext);
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
}
