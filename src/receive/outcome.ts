import type { SvcWebhookError } from '../errors';
import type { IgnoreReason } from '../internal/delivery/delivery-record';

/** The HTTP answer to one request, independent of the framework that sends it. */
export interface Outcome {
  readonly status: number;
  readonly body: string;
  readonly retryAfter?: number;
  /** More of the request body is still on its way: close the connection rather than read it. */
  readonly closeConnection?: boolean;
}

const OK: Outcome = { status: 200, body: '{"ok":true}' };
const DUPLICATE: Outcome = { status: 200, body: '{"ok":true,"duplicate":true}' };
const PARKED: Outcome = { status: 200, body: '{"ok":true,"parked":true}' };
const REPLAYED: Outcome = { status: 200, body: '{"ok":true,"replayed":true}' };
const ACCEPTED: Readonly<Record<string, Outcome>> = { duplicate: DUPLICATE, parked: PARKED, replayed: REPLAYED };
const IGNORED: Readonly<Record<IgnoreReason, Outcome>> = {
  self: { status: 200, body: '{"ok":true,"ignored":"self"}' },
  bot: { status: 200, body: '{"ok":true,"ignored":"bot"}' },
  rule: { status: 200, body: '{"ok":true,"ignored":"rule"}' },
};
/** Answered when the pipeline itself failed in a way it could not describe (a logger that throws). */
export const INTERNAL: Outcome = { status: 500, body: '{"ok":false,"code":"internal_error","message":"internal error"}' };

/** How an accepted delivery ended: each is answered 200. */
export type Accepted = 'handled' | 'duplicate' | 'enqueued' | 'parked' | 'replayed';

/**
 * The answer to an accepted delivery, or to a refused one: its status, code and message (the
 * library's own words, safe to send), Retry-After, and whether to close the connection.
 */
export function answerOf(result: Accepted | SvcWebhookError, closeConnection = false): Outcome {
  if (typeof result === 'string') return ACCEPTED[result] ?? OK;
  const outcome: { -readonly [K in keyof Outcome]: Outcome[K] } = {
    status: result.status,
    body: JSON.stringify({ ok: false, code: result.code, message: result.message }),
  };
  if (result.retryAfter !== undefined) outcome.retryAfter = result.retryAfter;
  if (closeConnection) outcome.closeConnection = true;
  return outcome;
}

/** The answer to an authentic event the board webhook's `ignore` option left out: 200, and why. */
export function ignoredAnswer(reason: IgnoreReason): Outcome {
  return IGNORED[reason];
}

/** The headers of an answer: its media type, and Retry-After (and Allow) when it has one. */
export function outcomeHeaders(outcome: Outcome, allow?: string): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' };
  if (outcome.retryAfter !== undefined) headers['Retry-After'] = String(outcome.retryAfter);
  if (allow !== undefined) headers.Allow = allow;
  return headers;
}
