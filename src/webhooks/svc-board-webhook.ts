import type { BoardEventMap, BoardEventType, BoardWebhookEvent } from '../generated/board-types';
import { boardEventTypes } from '../generated/board-types';
import { commonMethods, listeners, type WebhookMiddlewareBase } from './webhook-methods';
import { expressMiddleware } from '../adapters/node/express-middleware';
import { settings, type BoardWebhookOptions } from './options';
import { boardJobs } from '../receive/webhook-jobs';
import { webhookInbox } from './webhook-inbox';
import type { BoardSecretClaim, SecretResolver } from '../verify/secret-resolver';
import { boardProtocol } from '../receive/board-protocol';
import { Receiver } from '../receive/receiver';
import { HandlerRegistry } from '../route/handler-registry';
import type { BoardHandler } from '../route/handler-types';

export interface BoardWebhookMiddleware extends WebhookMiddlewareBase<BoardHandler<BoardWebhookEvent>> {
  /** Runs `handler` for every delivery of the given type(s); the event is typed by its type. */
  on<T extends BoardEventType>(type: T | readonly T[], handler: BoardHandler<BoardEventMap[T]>): this;
}

const KNOWN_TYPES = new Set<string>(boardEventTypes);

/** The board webhook receiver: `app.use(svcBoardWebhook(secret))`. */
export function svcBoardWebhook(secretOrOptions: string | readonly string[] | SecretResolver<BoardSecretClaim> | BoardWebhookOptions): BoardWebhookMiddleware {
  const config = settings(secretOrOptions, 'board');
  const byType = new HandlerRegistry<BoardHandler<never>>();
  const lists = listeners<BoardHandler<never>>();
  const protocol = boardProtocol(config.secrets, config.pattern, config.toleranceSeconds, { byType, any: lists.any });
  const inbox = webhookInbox(config, protocol, config.inbox && boardJobs(config.inbox), lists.deliveryListeners);
  const receiver = new Receiver(protocol, config, lists.errorHandlers, lists.deliveryListeners, inbox.handoff);
  const middleware = expressMiddleware('svcBoardWebhook', receiver) as BoardWebhookMiddleware;
  return Object.assign(middleware, commonMethods(middleware, { lists, inbox, closeReceiver: () => receiver.close(), flushLog: config.flushLog }), {
    path: config.path,
    forgetSecret(id: string) {
      config.secrets.lookup?.forget(id);
      return middleware;
    },
    on(type: string | readonly string[], handler: BoardHandler<never>) {
      byType.add(type, handler, (t) => {
        if (!KNOWN_TYPES.has(t)) throw new TypeError(`svc-webhooks: unknown board event type "${t}"; handle types this version does not know with onAny()`);
      });
      return middleware;
    },
  });
}
