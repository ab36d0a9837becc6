import type { WebhookLogger } from '../internal/logging/logger';
import type { PathPattern } from '../internal/request/path-pattern';
import type { Outcome } from '../receive/receiver';
import type { RequestAccess } from '../internal/request/request-access';

/** What an adapter needs of a webhook: the pipeline that answers a request, and the path it owns. */
export interface WebhookReceiver {
  receive<R>(req: R, access: RequestAccess<R>): Promise<Outcome>;
  readonly path: string;
  readonly pattern: PathPattern;
  /** The webhook's logger, for what an adapter alone can see (an event of a shape it does not know). */
  readonly logger: WebhookLogger;
  /** Told of a signed delivery that passed the webhook on another path and was answered 404. */
  misrouted(came: string, answers: readonly string[]): void;
  /** Told where a mount makes the webhook answer (Express's mount path, known at a first request). */
  mounted(fullPath: string, mountedAt: string): void;
}

// A symbol the package alone holds: the adapters reach the pipeline through the webhook itself,
// and its enumerable members stay exactly the documented ones.
const RECEIVER = Symbol('svc-webhooks.receiver');

export function attachReceiver(webhook: object, receiver: WebhookReceiver): void {
  Object.defineProperty(webhook, RECEIVER, { value: receiver });
}

/** The receiver of a webhook made by svcBoardWebhook or svcBotWebhook; a TypeError for anything else. */
export function receiverOf(webhook: unknown, adapter: string): WebhookReceiver {
  const found =
    typeof webhook === 'function' || (typeof webhook === 'object' && webhook !== null) ? (webhook as { [RECEIVER]?: WebhookReceiver })[RECEIVER] : undefined;
  if (found === undefined) throw new TypeError(`svc-webhooks: ${adapter}() takes a webhook made by svcBoardWebhook() or svcBotWebhook()`);
  return found;
}
