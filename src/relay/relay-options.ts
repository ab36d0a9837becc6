/** Readers of the relay's and the listener's flag values: durations and sizes in the units people type. */

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `30m`, `24h`, `2d` in ms; undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  const m = /^\s*(\d{1,9})\s*(ms|s|m|min|h|d)\s*$/.exec(text);
  return m === null ? undefined : Number(m[1]) * DURATION_UNITS[m[2]!]!;
}

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** `524288`, `512kb`, `1mb` in bytes; undefined when the text is not one. */
export function parseSize(text: string): number | undefined {
  const m = /^\s*(\d{1,12})\s*(b|kb|mb)?\s*$/i.exec(text);
  return m === null ? undefined : Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]!;
}

/** Whether `hostname` (of a URL) is this machine: localhost, 127/8 or ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
