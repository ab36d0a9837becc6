import type { WebhookLogger } from '../internal/logging/logger';
import type { SvcWebhookError } from '../errors';
import { claimedBoardOf } from '../internal/logging/claimed-board-note';
import { singleHeader } from '../internal/request/headers';
import { printable } from '../internal/logging/printable';
import type { RequestFacts } from '../internal/request/request-access';

/**
 * Refusals that are the sender's (or a forger's) doing, not a fault here: one line each, without a
 * stack trace, with what the request claimed so a person can find the delivery in svc.
 */
const EXPECTED_STATUSES = new Set([400, 401, 408, 409, 413, 415]);

/** At most one line per code per interval; the refusals not logged are counted on the next line. */
export const REFUSAL_LOG_INTERVAL_MS = 10_000;

export function isExpectedRefusal(error: SvcWebhookError): boolean {
  return EXPECTED_STATUSES.has(error.status);
}

/**
 * Refusals logged as one rate-limited line: the expected ones, and `secret_unavailable`, whose
 * cause the secret lookup logs itself (any request can claim a board id and cause one).
 */
export function isCountedRefusal(error: SvcWebhookError): boolean {
  return isExpectedRefusal(error) || error.code === 'secret_unavailable';
}

interface Window {
  opened: number;
  repeated: number;
}

export class RefusalLog {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly logger: WebhookLogger,
    private readonly now: () => number,
  ) {}

  /** Logs the refusal at warn, unless this code was logged less than an interval ago (then counts it). */
  refused(error: SvcWebhookError, req: RequestFacts, fields: Record<string, unknown>): void {
    const at = this.now();
    const window = this.windows.get(error.code);
    if (window !== undefined && at - window.opened < REFUSAL_LOG_INTERVAL_MS) {
      window.repeated++;
      return;
    }
    const repeated = window?.repeated ?? 0;
    this.windows.set(error.code, { opened: at, repeated: 0 });
    const line: Record<string, unknown> = {
      ...fields,
      status: error.status,
      code: error.code,
      reason: error.message,
      unverified: claims(req),
      peer: req.socket?.remoteAddress,
    };
    if (repeated > 0) line.repeated = repeated;
    const more = repeated > 0 ? ` (and ${repeated} more with this code since the last line)` : '';
    this.logger.warn(line, `delivery refused: ${error.code}${more}`);
  }
}

/** What the request says about itself, unverified: never trust it, only show it. */
function claims(req: RequestFacts): Record<string, string> {
  const out: Record<string, string> = {};
  const id = singleHeader(req, 'x-svc-delivery');
  const event = singleHeader(req, 'x-svc-event');
  const board = claimedBoardOf(req);
  if (id !== undefined) out.deliveryId = printable(id);
  if (event !== undefined) out.event = printable(event);
  if (board !== undefined) out.boardId = printable(board);
  return out;
}
