import { SENSITIVE_KEYS } from '../internal/logging/log-redaction';

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
// oxlint-disable-next-line no-control-regex -- control characters are what it finds in text bound for a terminal
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Text from svc (or any sender) as a terminal may show it: control characters become "?", line breaks spaces. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, '?').replace(/[\n\t]/g, ' ');
}

// What JSON.stringify leaves as it is but a terminal acts on: DEL, C1 controls (the 8-bit CSI among
// them), bidirectional controls, and the line and paragraph separators.
const RAW_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u200e\u200f\u2066-\u2069\u2028\u2029]/g;

function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `--json` output: JSON (indented by `indent` spaces; 0 for one line) in which every character a
 * terminal would act on is a \u escape, so it parses back to the same values.
 */
export function terminalJson(value: unknown, indent = 2): string {
  return `${JSON.stringify(value, null, indent).replace(RAW_IN_JSON, unicodeEscape)}\n`;
}

/**
 * Text that must be shown exactly (a secret to copy): as it is when a terminal shows it as it is,
 * else as a JSON string whose control characters are escapes, and `escaped` says so.
 */
export function exactText(text: string): { shown: string; escaped: boolean } {
  // oxlint-disable-next-line no-control-regex -- control characters are what it finds in text bound for a terminal
  if (!/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/.test(text)) return { shown: text, escaped: false };
  return { shown: JSON.stringify(text).replace(RAW_IN_JSON, unicodeEscape), escaped: true };
}

/**
 * A stream that turns every control character but the line break and the tab into "?": the last
 * guard of standard output, for text a command forgot to make printable.
 */
export function controlFreeStream(destination: { write(text: string): unknown }): { write(text: string): unknown } {
  return { write: (text: string) => destination.write(text.replace(STREAM_UNPRINTABLE, '?')) };
}

// oxlint-disable-next-line no-control-regex -- control characters are what it finds in text bound for a terminal
const STREAM_UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

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
