import type { LogLevel, WebhookLogger } from '../internal/logging/logger';
import { duration, when } from './describe-status';
import type { WebhookChange, WebhookStatus } from './watch-types';

/** Lines of one kind logged one by one per window; the rest are counted in one line at its end. */
export const MAX_LINES_PER_WINDOW = 20;

interface Window {
  readonly level: LogLevel;
  readonly what: string;
  logged: number;
  held: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * One line per change of a webhook's health, at the level of what it means for events: back to
 * healthy at info; failing and an unreachable svc at warn; disabled, paused, missing, misdirected
 * and a refused token at error. A first status that is healthy is not logged (a watcher of 10,000 boards would
 * start with 10,000 lines); the first round ends with one line that counts them. When svc fails
 * for many webhooks at once, at most MAX_LINES_PER_WINDOW lines of one state are logged per window
 * (the poll interval); the rest are counted in one line at its end. `onChange` and the metrics see
 * every change.
 */
export class ChangeLog {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly logger: WebhookLogger,
    private readonly windowMs: number,
  ) {}

  change({ previous, current }: WebhookChange): void {
    if (previous === undefined && current.state === 'healthy') return;
    const level = levelOf(current);
    const who = current.webhook === 'board' ? `board webhook of board ${current.boardId}` : 'bot webhook';
    const message = previous !== undefined && current.state === 'healthy' ? `${who}: back to healthy (was ${previous.state})` : `${who}: ${current.summary}`;
    this.limited(`${current.state}:${current.reason ?? ''}`, level, {
      what: `webhooks became ${current.state}`,
      fields: lineFields(previous, current),
      message,
    });
  }

  /** A line that may repeat for many webhooks (an onChange that throws): limited as changes are. */
  limited(kind: string, level: LogLevel, line: { what: string; fields: Record<string, unknown>; message: string }): void {
    let window = this.windows.get(kind);
    if (window === undefined) {
      window = { level, what: line.what, logged: 0, held: 0, timer: undefined };
      this.windows.set(kind, window);
      const opened = window;
      opened.timer = setTimeout(() => this.closeWindow(kind, opened), this.windowMs);
      opened.timer.unref();
    }
    if (window.logged < MAX_LINES_PER_WINDOW) {
      window.logged++;
      this.logger[level](line.fields, line.message);
    } else {
      window.held++;
    }
  }

  /** Writes the counts still held. */
  close(): void {
    for (const [kind, window] of this.windows) this.closeWindow(kind, window);
  }

  private closeWindow(kind: string, window: Window): void {
    clearTimeout(window.timer);
    this.windows.delete(kind);
    if (window.held > 0) {
      this.logger[window.level](
        { held: window.held },
        `and ${window.held} more ${window.what} within ${duration(this.windowMs)}, not logged one by one (onChange and the metrics have each)`,
      );
    }
  }
}

function levelOf(status: WebhookStatus): LogLevel {
  switch (status.state) {
    case 'healthy':
      return 'info';
    case 'failing':
      return 'warn';
    case 'unreachable':
      return status.reason === 'unauthorized' || status.reason === 'forbidden' ? 'error' : 'warn';
    default:
      return 'error';
  }
}

/** The line's fields: what svc said, by name, never the token or a secret (the state never holds one). */
export function lineFields(previous: WebhookStatus | undefined, current: WebhookStatus): Record<string, unknown> {
  const fields: Record<string, unknown> = { webhook: current.webhook, state: current.state, since: new Date(current.since).toISOString() };
  if (current.webhook === 'board') fields.boardId = current.boardId;
  if (previous !== undefined) fields.previous = previous.state;
  if (current.url !== undefined) fields.url = current.url;
  if (current.expectedUrl !== undefined) fields.expectedUrl = current.expectedUrl;
  if (current.svcState !== undefined) fields.svcState = current.svcState;
  if (current.failingSince !== undefined) fields.failingSince = when(current.failingSince);
  if (current.disablesAt !== undefined) fields.disablesAt = new Date(current.disablesAt).toISOString();
  if (current.disabledAt !== undefined) fields.disabledAt = when(current.disabledAt);
  if (current.lastOkAt !== undefined) fields.lastOkAt = when(current.lastOkAt);
  if (current.lastError !== undefined) fields.lastError = current.lastError;
  if (current.pending !== undefined) fields.pending = current.pending;
  if (current.pausedReason !== undefined) fields.pausedReason = current.pausedReason;
  if (current.reason !== undefined) fields.reason = current.reason;
  if (current.httpStatus !== undefined) fields.httpStatus = current.httpStatus;
  if (current.problem !== undefined) fields.problem = current.problem;
  return fields;
}
