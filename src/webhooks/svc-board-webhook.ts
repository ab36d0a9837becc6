import type { BoardEventMap, BoardEventType, BoardWebhookEvent } from '../generated/board-types';
import { boardEventTypes } from '../generated/board-types';
import { boardJobs } from '../inbox/webhook-jobs';
import { HandlerRegistry, boardRoute } from '../route/delivery-route';
import type { BoardHandler } from '../route/handler-types';
import { boardDelivery } from '../validate/board-delivery';
import { boardVerifier } from '../verify/verify-signature';
import type { BoardSecretClaim, SecretResolver } from '../verify/secret-resolver';
import { assembleWebhook } from './assemble-webhook';
import { settings, type BoardWebhookOptions } from './webhook-settings';
import { listeners, type WebhookMiddlewareBase } from './webhook-methods';

/** The board webhook: an Express middleware (also a node:http handler) with its handler registration. */
export interface BoardWebhookMiddleware extends WebhookMiddlewareBase<BoardHandler<BoardWebhookEvent>> {
  /** Runs `handler` for every delivery of the given type(s); the event is typed by its type. */
  on<T extends BoardEventType>(type: T | readonly T[], handler: BoardHandler<BoardEventMap[T]>): this;
}

const KNOWN_TYPES = new Set<string>(boardEventTypes);

/**
 * The board webhook receiver: `app.use(svcBoardWebhook(secret))`. It verifies each delivery's
 * `v1=` signature and timestamp, validates it, claims its id once, and runs the handlers of its type.
 */
export function svcBoardWebhook(secretOrOptions: string | readonly string[] | SecretResolver<BoardSecretClaim> | BoardWebhookOptions): BoardWebhookMiddleware {
  const config = settings(secretOrOptions, 'board');
  const byType = new HandlerRegistry<BoardHandler<never>>();
  const lists = listeners<BoardHandler<never>>();
  const protocol = {
    webhook: 'board' as const,
    schema: 'board' as const,
    verifier: boardVerifier({ secrets: config.secrets, pattern: config.pattern, toleranceSeconds: config.toleranceSeconds }),
    check: boardDelivery,
    route: boardRoute({ byType, any: lists.any }),
  };
  const webhook = assembleWebhook({
    name: 'svcBoardWebhook',
    settings: config,
    protocol,
    jobs: config.inbox && boardJobs(config.inbox),
    lists,
  }) as unknown as BoardWebhookMiddleware;
  return Object.assign(webhook, {
    on(type: string | readonly string[], handler: BoardHandler<never>) {
      byType.add(type, handler, (t) => {
        if (!KNOWN_TYPES.has(t)) throw new TypeError(`svc-webhooks: unknown board event type "${t}"; handle types this version does not know with onAny()`);
      });
      return webhook;
    },
  });
}
