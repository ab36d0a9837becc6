/** Longest unverified value a log line shows. */
const MAX_CHARS = 100;

/**
 * An unverified value (a claimed id, a request path) as a log line can show it: bounded, without
 * control characters or the bidirectional overrides that would make a terminal lie about it.
 */
export function printable(value: string, max = MAX_CHARS): string {
  // oxlint-disable-next-line no-control-regex -- control characters are what it finds in text bound for a terminal
  const clean = value.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}
