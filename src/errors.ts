/**
 * The one error model of the library. The `code` is the contract: it is stable, documented in
 * docs/errors.md and sent in every error response; the message is for people and may change.
 * Messages are written by this library only (a handler's own error stays in `cause`), so they are
 * safe to send.
 */
export const errorStatus = {
  /** The middleware was mounted after a body parser that consumed the request stream. */
  body_already_consumed: 500,
  /** The request stream ended early or its length did not match Content-Length. */
  body_read_failed: 400,
  /** The body did not arrive within the sender's own 10 s deadline. */
  body_timeout: 408,
  body_too_large: 413,
  unsupported_media_type: 415,
  content_encoding_unsupported: 415,
  signature_missing: 401,
  signature_malformed: 401,
  signature_duplicated: 401,
  signature_mismatch: 401,
  timestamp_missing: 401,
  timestamp_malformed: 401,
  /** X-Svc-Timestamp is further from now than the tolerance, or a bot update's `createdAt` is ahead of now by more than 5 minutes. */
  timestamp_out_of_tolerance: 401,
  /** A bot update older than the de-duplication window: it could be a replay of a forgotten id. */
  delivery_expired: 401,
  /**
   * The claimed board has no secret here: the resolver answered undefined, or the claimed id is no
   * svc board id (a lowercase UUID), so the resolver is not asked. No MAC is computed.
   */
  unknown_board: 401,
  /** The claimed bot (its path) has no secret here: the resolver answered undefined, or the path names no svc user id (a lowercase UUID), so the resolver is not asked. */
  unknown_bot: 401,
  /** A secret resolver is set, and the body names no board (`board.id`) and the path none either. */
  board_id_missing: 401,
  /** The board in the path and the board in the body differ, or the body names another board than the one whose secret verified it. */
  board_id_mismatch: 401,
  /**
   * A nested reference of a board event contradicts the event's board where svc's contract makes
   * them equal: `task.board_id`, the board key in `task.key`, `task.workspace_id`.
   */
  board_reference_mismatch: 401,
  /** With a resolver: a bot update's `botUserId` is not the bot its path names (whose secret verified it). */
  bot_id_mismatch: 401,
  /** JSON on the wire must be UTF-8; a body that is not is refused rather than decoded with replacements. */
  invalid_utf8: 400,
  invalid_json: 400,
  forbidden_key: 400,
  delivery_id_mismatch: 400,
  event_type_mismatch: 400,
  schema_violation: 400,
  delivery_in_progress: 409,
  /** A replay named a delivery that is not parked (never parked, dropped, or past its retention). */
  not_parked: 404,
  handler_failed: 500,
  handler_timeout: 503,
  store_unavailable: 503,
  /** The secret resolver threw, rejected, returned something that is not a secret, or was too slow (remembered for `secretLookup.failureTtlMs`). */
  secret_unavailable: 503,
  /** Inbox mode: Redis did not take the delivery in time; nothing was enqueued and svc retries it. */
  inbox_unavailable: 503,
  shutting_down: 503,
  /** A fault inside svc-webhooks itself; the delivery is retried by the sender. */
  internal_error: 500,
} as const;

/** Every code a refusal carries; docs/errors.md says what each means and what to do. */
export type ErrorCode = keyof typeof errorStatus;

/** What an SvcWebhookError carries besides its code and message. */
export interface SvcWebhookErrorOptions {
  cause?: unknown;
  /** Seconds after which the sender may retry; sent as Retry-After. */
  retryAfter?: number;
  /** Machine-readable detail that is safe to send (never secrets or signatures). */
  details?: unknown;
}

/** A refused delivery or a failure of the pipeline: its `code` (the contract), HTTP `status`, and a message safe to send. */
export class SvcWebhookError extends Error {
  override readonly name = 'SvcWebhookError';
  readonly code: ErrorCode;
  /** The HTTP status the delivery is answered with. */
  readonly status: number;
  readonly retryAfter: number | undefined;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: SvcWebhookErrorOptions = {}) {
    // `'cause' in`: a handler may throw `undefined`, and the log should say so.
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.code = code;
    this.status = errorStatus[code];
    this.retryAfter = options.retryAfter;
    this.details = options.details;
  }
}

/** Whether `value` is an SvcWebhookError. */
export function isSvcWebhookError(value: unknown): value is SvcWebhookError {
  return value instanceof SvcWebhookError;
}
