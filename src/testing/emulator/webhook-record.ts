/** A delivery's fate: queued, answered 2xx, or given up on (and why). */
export type DeliveryStatus = 'pending' | 'delivered' | 'expired' | 'dropped' | 'failed';

/** One event queued for one webhook, with its exact body bytes. */
export interface QueuedDelivery {
  readonly id: string;
  readonly kind: 'board' | 'bot';
  /** The board id or the bot id. */
  readonly ownerId: string;
  /** The board event type, or the bot event kind. */
  readonly eventType: string;
  /** The board event's `sequence`; null for a bot update. */
  readonly sequence: number | null;
  readonly body: string;
  /** When it was queued, on the emulator's clock. */
  readonly createdAt: number;
  attempts: number;
  status: DeliveryStatus;
  /** Cancels the next scheduled attempt. */
  cancel?: () => void;
}

/** A webhook as svc holds it: the secret is here and never leaves through a route. */
export interface WebhookRecord {
  readonly kind: 'board' | 'bot';
  readonly ownerId: string;
  url: string;
  secret: string;
  enabled: boolean;
  disabledAt: number | null;
  failingSince: number | null;
  lastOkAt: number | null;
  lastError: string | null;
  pausedReason: 'PLAN' | null;
  /** Deliveries not yet answered 2xx nor given up on. */
  readonly queue: Set<QueuedDelivery>;
  /** Deliveries that came due while the webhook was paused, sent on resume. */
  readonly held: QueuedDelivery[];
  /** Cancels the check that disables the webhook a day after `failingSince`. */
  cancelDisable?: () => void;
}

/** The state GET answers: every field the spec lists, timestamps as ISO 8601 UTC; never the secret. */
export interface BotWebhookView {
  url: string;
  enabled: boolean;
  /** A timestamp: ISO 8601 UTC unless the emulator was told another format. */
  disabledAt: string | null;
  failingSince: string | null;
  lastOkAt: string | null;
  lastError: string | null;
  pending: number;
}

/** The board webhook's state: the bot's fields, `hasSecret` and `pausedReason`. */
export interface BoardWebhookView extends BotWebhookView {
  hasSecret: boolean;
  pausedReason: 'PLAN' | null;
}

/**
 * How the state's timestamps are written. The spec does not show their format: ISO 8601 UTC by
 * default; the others are what another svc build might send, for testing a client's reading.
 */
export type StateTimeFormat = 'iso' | 'epoch-seconds' | 'epoch-ms' | 'http-date' | 'proto';

/** The timestamp formats, by name. */
export const STATE_TIME_FORMATS: Record<StateTimeFormat, (ms: number) => unknown> = {
  iso: (ms) => new Date(ms).toISOString(),
  'epoch-seconds': (ms) => Math.floor(ms / 1000),
  'epoch-ms': (ms) => ms,
  'http-date': (ms) => new Date(ms).toUTCString(),
  proto: (ms) => ({ seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 }),
};

/** A new, enabled webhook with an empty queue. */
export function newWebhook(input: { kind: 'board' | 'bot'; ownerId: string; url: string; secret: string }): WebhookRecord {
  return { ...input, enabled: true, disabledAt: null, failingSince: null, lastOkAt: null, lastError: null, pausedReason: null, queue: new Set(), held: [] };
}

/** The state a GET answers for `hook`, its timestamps written in `format`. */
export function viewOf(hook: WebhookRecord, format: StateTimeFormat = 'iso'): BotWebhookView | BoardWebhookView {
  const write = STATE_TIME_FORMATS[format];
  const iso = (ms: number | null): string | null => (ms === null ? null : (write(ms) as string));
  const common: BotWebhookView = {
    url: hook.url,
    enabled: hook.enabled,
    disabledAt: iso(hook.disabledAt),
    failingSince: iso(hook.failingSince),
    lastOkAt: iso(hook.lastOkAt),
    lastError: hook.lastError,
    pending: hook.queue.size,
  };
  return hook.kind === 'bot' ? common : { ...common, hasSecret: hook.secret !== '', pausedReason: hook.pausedReason };
}

/** Ends every queued delivery of `hook` with `status` and cancels their attempts. */
export function endQueue(hook: WebhookRecord, status: 'dropped' | 'failed'): void {
  for (const delivery of hook.queue) {
    delivery.cancel?.();
    delivery.status = status;
  }
  hook.queue.clear();
  hook.held.length = 0;
  hook.cancelDisable?.();
  hook.cancelDisable = undefined;
}
