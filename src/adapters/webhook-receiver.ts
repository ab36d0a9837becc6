import type { PathPattern } from '../internal/path-pattern';
import type { Outcome } from '../receive/receiver';
import type { RequestAccess } from '../internal/request-access';

/** What an adapter needs of a webhook: the pipeline that answers a request, and the path it owns. */
export interface WebhookReceiver {
  receive<R>(req: R, access: RequestAccess<R>): Promise<Outcome>;
  readonly path: string;
  readonly pattern: PathPattern;
  /** Told of a signed delivery that passed the webhook on another path and was answered 404. */
  misrouted(came: string, answers: readonly string[]): void;
  /** Told where a mount makes the webhook answer (Express's mount path, known at a first request). */
  mounted(fullPath: string, mountedAt: string): void;
}

// Kept apart from the public object, so a webhook's methods stay exactly the documented ones.
const receivers = new WeakMap<object, WebhookReceiver>();

export function attachReceiver(webhook: object, receiver: WebhookReceiver): void {
  receivers.set(webhook, receiver);
}

/** The receiver of a webhook made by svcBoardWebhook or svcBotWebhook; a TypeError for anything else. */
export function receiverOf(webhook: unknown, adapter: string): WebhookReceiver {
  const found = typeof webhook === 'function' || (typeof webhook === 'object' && webhook !== null) ? receivers.get(webhook) : undefined;
  if (found === undefined) throw new TypeError(`svc-webhooks: ${adapter}() takes a webhook made by svcBoardWebhook() or svcBotWebhook()`);
  return found;
}
