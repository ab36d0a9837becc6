import { duration, when } from '../watch/describe-status';
import type { WebhookChange, WebhookStatus } from '../watch/watch-types';
import { printable } from './format';

const HEAD = ['WEBHOOK', 'STATE', 'SINCE', 'PENDING', 'LAST ERROR / NOTE'] as const;

/** One row per webhook: which, state, since when, pending, last error (or what the state means). */
export function statusTable(statuses: readonly WebhookStatus[], now: number): string {
  const rows = statuses.map((s) => [name(s), s.state, since(s, now), s.pending === undefined ? '-' : String(s.pending), note(s)]);
  const widths = HEAD.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(HEAD), ...rows.map(line)].join('\n') + '\n';
}

/** A change as `--watch` prints it: time, webhook, previous → state, and what it means. */
export function changeLine(change: WebhookChange): string {
  const { previous, current } = change;
  const from = previous === undefined ? '' : `${previous.state} → `;
  // "failing since …", "paused by svc …": the summary goes on from the state's name, said once.
  const summary = printable(current.summary);
  const rest = summary.startsWith(current.state) ? summary.slice(current.state.length) : `: ${summary}`;
  return `${new Date(current.checkedAt).toISOString()}  ${name(current)}  ${from}${current.state}${rest}\n`;
}

/** A status for `--json`: what the watcher reports, and ISO times beside its numbers. */
export function statusJson(status: WebhookStatus): Record<string, unknown> {
  const out: Record<string, unknown> = { ...status, since: new Date(status.since).toISOString(), checkedAt: new Date(status.checkedAt).toISOString() };
  if (status.disablesAt !== undefined) out.disablesAt = new Date(status.disablesAt).toISOString();
  return out;
}

function name(s: WebhookStatus): string {
  return s.webhook === 'board' ? `board ${printable(s.boardId)}` : 'bot';
}

/** svc's own time for failing and disabled; else when this run first saw the state, if earlier than this check. */
function since(s: WebhookStatus, now: number): string {
  if (s.state === 'failing') return withAge(s.failingSince?.ms, when(s.failingSince), now);
  if (s.state === 'disabled' && s.disabledAt !== undefined) return withAge(s.disabledAt.ms, when(s.disabledAt), now);
  return s.since < s.checkedAt ? withAge(s.since, new Date(s.since).toISOString(), now) : '-';
}

function withAge(ms: number | undefined, text: string, now: number): string {
  return ms === undefined ? text : `${text} (${duration(now - ms)} ago)`;
}

function note(s: WebhookStatus): string {
  switch (s.state) {
    case 'healthy':
      return s.lastError === undefined ? '-' : printable(s.lastError);
    case 'failing': {
      const left =
        s.disablesAt === undefined
          ? 'svc disables it a day after failingSince'
          : s.disablesAt <= s.checkedAt
            ? 'svc disables it any moment now'
            : `svc disables it in about ${duration(s.disablesAt - s.checkedAt)}`;
      return `${printable(s.lastError ?? 'no error given')} (${left}, dropping its queue)`;
    }
    case 'disabled':
      return `${s.lastError === undefined ? '' : `${printable(s.lastError)} `}(queue dropped; re-enable: ${s.webhook === 'board' ? `svc-webhooks board-webhook reenable ${printable(s.boardId)} --url ${printable((s.expectedUrl ?? '<url>').replace(/\?…$/, ''))}` : 'svc-webhooks bot-webhook set'})`;
    default:
      return printable(s.summary);
  }
}
