/**
 * What the webhook watcher reports: the health of each webhook as svc sees it, and each change of it.
 */

/**
 * The health of one webhook:
 * - `healthy`: enabled, deliveries succeed;
 * - `failing`: enabled, deliveries fail since `failingSince`; svc disables it a day after that;
 * - `disabled`: svc disabled it (a day of failures) and dropped its queue; a PUT re-enables it;
 * - `paused`: a board webhook paused by svc (`pausedReason`, `PLAN` when the plan dropped below
 *   Business); new events are not queued while it lasts;
 * - `missing`: svc answered 404: the webhook was deleted (its queue marked failed) or never set;
 * - `misdirected`: svc delivers to another URL than the expected one (`expectUrl`): another
 *   scheme, host, port or path. It wins over every other state svc reports (a disabled webhook
 *   aimed elsewhere is misdirected: re-enabling it would send its events there);
 * - `unreachable`: svc's API did not tell (no answer, 5xx, 401/403, an answer that cannot be read):
 *   the webhook's own state is unknown, never taken for healthy.
 */
export type WebhookHealth = 'healthy' | 'failing' | 'disabled' | 'paused' | 'missing' | 'misdirected' | 'unreachable';

/**
 * Every health, in order of severity as the CLI sorts them: `misdirected` after `missing`, as its
 * events go to someone else; `unreachable` last, as it is unknown.
 */
export const webhookHealths: readonly WebhookHealth[] = ['healthy', 'failing', 'paused', 'disabled', 'missing', 'misdirected', 'unreachable'];

/** A timestamp of svc's state as it came (`raw`), and in ms since the epoch when it could be read. */
export interface SvcTime {
  readonly raw: string;
  /** Undefined when the value is in no format the watcher reads (the spec does not give one). */
  readonly ms: number | undefined;
}

/** Which webhook: a board's, or the bot's. */
export type WatchedWebhook = { readonly webhook: 'board'; readonly boardId: string } | { readonly webhook: 'bot' };

/** The last known health of one webhook, with what svc said of it. */
export type WebhookStatus = WatchedWebhook & {
  readonly state: WebhookHealth;
  /**
   * When it entered this state, in ms since the epoch: svc's own time where the state carries one
   * (`failingSince`, `disabledAt`) and it can be read, else when this watcher first saw the state.
   */
  readonly since: number;
  /** When svc was last asked, in ms since the epoch. */
  readonly checkedAt: number;
  /** The delivery URL, without its query or credentials. */
  readonly url?: string;
  /** The URL expected (`expectUrl`), without its query or credentials, when it was checked. */
  readonly expectedUrl?: string;
  /** `misdirected`: the health svc's state shows apart from its URL (e.g. `disabled`). */
  readonly svcState?: WebhookHealth;
  readonly failingSince?: SvcTime;
  readonly disabledAt?: SvcTime;
  readonly lastOkAt?: SvcTime;
  /** svc's last delivery error, on one line, at most 300 characters. */
  readonly lastError?: string;
  /** Deliveries queued at svc, as svc gave the number (a uint64 may come as a string). */
  readonly pending?: number | string;
  /** `paused`: svc's reason as it came (`PLAN`, or a value the spec does not list). */
  readonly pausedReason?: string;
  /** `failing`: when svc disables it (`failingSince` + 1 day); undefined when `failingSince` cannot be read. */
  readonly disablesAt?: number;
  /**
   * `unreachable`: why (`timeout`, `network_error`, `svc_api_error`, `invalid_response`,
   * `rate_limited`, `unauthorized`, `forbidden`, `malformed_state`); `missing`: `not_found`.
   */
  readonly reason?: string;
  /** The HTTP status svc answered with, when it answered with an error. */
  readonly httpStatus?: number;
  /** `unreachable`: what went wrong with the call, on one line (never a token). */
  readonly problem?: string;
  /** One line for people, e.g. "failing since 2026-11-26T10:00:00.000Z: svc disables it in 3 h 5 min". */
  readonly summary: string;
};

/** A change of health: `previous` is undefined the first time a webhook is seen. */
export interface WebhookChange {
  readonly previous: WebhookStatus | undefined;
  readonly current: WebhookStatus;
}

/** A webhook watcher: polls svc for the state of each webhook and reports each change. */
export interface WebhookWatcher {
  /**
   * Resolves once every webhook known when it was called has been checked (at most one interval after
   * it was added), or when the watcher is closed.
   */
  checked(): Promise<void>;
  /** The last known status of each webhook: boards in the order listed, then the bot. */
  statuses(): WebhookStatus[];
  /** Stops polling; resolves when the requests in flight have settled. */
  close(): Promise<void>;
}
