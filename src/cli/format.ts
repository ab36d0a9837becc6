import { SENSITIVE_KEYS } from '../internal/log-redaction';

/** A duration for people: 850 ms, 2.5 s, 4 min, 1 h 3 min. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))} s`;
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const rest = minutes % 60;
  return rest === 0 ? `${minutes / 60} h` : `${Math.floor(minutes / 60)} h ${rest} min`;
}

function formatValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  // JSON escapes C0 controls but leaves C1 controls and bidirectional overrides as they are.
  if (typeof value === 'object') return printable(JSON.stringify(value));
  return printable(String(value));
}

// C0 and C1 controls (terminal escapes among them) and the bidirectional overrides that reorder text.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Text from svc (or any sender) as a terminal may show it: control characters become "?", line breaks spaces. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, '?').replace(/[\n\t]/g, ' ');
}

/**
 * A copy of what svc answered without credentials: a field named like one (`secret`, `token`,
 * `authorization`, in any case, at any depth) is shown as "[redacted]". svc never sends one in a
 * webhook's state; if it ever did, this output would not show it.
 */
export function withoutCredentials(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null || depth > 10) return value;
  if (Array.isArray(value)) return value.map((item) => withoutCredentials(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = SENSITIVE_KEYS.has(key.toLowerCase()) ? '[redacted]' : withoutCredentials(item, depth + 1);
  return out;
}

/** Fields as aligned `name  value` lines, in the order given; unknown fields included, credentials not. */
export function formatFields(shown: Record<string, unknown>, indent = '  '): string {
  const fields = withoutCredentials(shown) as Record<string, unknown>;
  // Field names come from svc as much as values do.
  const rows = Object.keys(fields).map((name) => [printable(name), formatValue(fields[name])] as const);
  const width = Math.max(0, ...rows.map(([name]) => name.length));
  return rows.map(([name, value]) => `${indent}${name.padEnd(width)}  ${value}\n`).join('');
}

/**
 * One line, whatever the message holds, without control characters. Split and trimmed rather than
 * matched with a regex around the line breaks, which takes quadratic time on long runs of spaces.
 */
export function oneLine(text: string): string {
  const lines = text.split('\n').map((line) => line.trim());
  return printable(lines.filter((line) => line !== '').join(' '));
}
