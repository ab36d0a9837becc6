import type { BoardEventMap, BoardEventType, BoardWebhookEvent } from './generated/board-types';
import { boardEventTypes } from './generated/board-types';
import { httpMiddleware, type Middleware } from './middleware/http-middleware';
import { settings, type BoardWebhookOptions } from './options';
import { boardProtocol, type BoardHandlers } from './receive/board-protocol';
import { Receiver } from './receive/receiver';
import { HandlerRegistry } from './route/handler-registry';
import type { BoardHandler, ErrorHandler } from './route/handler-types';

export interface BoardWebhookMiddleware extends Middleware {
  /** Runs `handler` for every delivery of the given type(s); the event is typed by its type. */
  on<T extends BoardEventType>(type: T | readonly T[], handler: BoardHandler<BoardEventMap[T]>): this;
  /** Runs `handler` for every delivery, including types this version does not know. */
  onAny(handler: BoardHandler<BoardWebhookEvent>): this;
  /** Is told of every delivery answered with an error (rejected, failed or timed out). */
  onError(handler: ErrorHandler): this;
  /** Stops taking deliveries (503) and resolves once running handlers have settled and committed. */
  close(): Promise<void>;
  /** The path this middleware answers when mounted with `app.use()`. */
  readonly path: string;
}

const KNOWN_TYPES = new Set<string>(boardEventTypes);

/** The board webhook receiver: `app.use(svcBoardWebhook(secret))`. */
export function svcBoardWebhook(secretOrOptions: string | readonly string[] | BoardWebhookOptions): BoardWebhookMiddleware {
  const config = settings(secretOrOptions, 'board');
  const handlers: BoardHandlers = { byType: new HandlerRegistry(), any: [] };
  const errorHandlers: ErrorHandler[] = [];
  const receiver = new Receiver(boardProtocol(config.keys, config.toleranceSeconds, handlers), config, errorHandlers);
  const middleware = httpMiddleware('svcBoardWebhook', config.path, (req) => receiver.receive(req)) as BoardWebhookMiddleware;
  return Object.assign(middleware, {
    path: config.path,
    on(type: string | readonly string[], handler: BoardHandler<never>) {
      handlers.byType.add(type, handler, (t) => {
        if (!KNOWN_TYPES.has(t)) throw new TypeError(`svc-webhooks: unknown board event type "${t}"; handle types this version does not know with onAny()`);
      });
      return middleware;
    },
    onAny(handler: BoardHandler) {
      if (typeof handler !== 'function') throw new TypeError('svc-webhooks: a handler must be a function');
      handlers.any.push(handler as BoardHandler<never>);
      return middleware;
    },
    onError(handler: ErrorHandler) {
      if (typeof handler !== 'function') throw new TypeError('svc-webhooks: an error handler must be a function');
      errorHandlers.push(handler);
      return middleware;
    },
    close: () => receiver.close(),
  });
}
