import type { IncomingMessage } from 'node:http';

/**
 * Every value a header was sent with, in order. Node joins repeated unknown headers with ", ",
 * which would hide a second signature, so this reads the raw header list instead.
 */
export function headerValues(req: IncomingMessage, lowerName: string): string[] {
  const raw = req.rawHeaders;
  if (raw === undefined || raw.length === 0) {
    const value = req.headers[lowerName];
    return value === undefined ? [] : Array.isArray(value) ? value : [value];
  }
  const values: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) values.push(raw[i + 1]!);
  }
  return values;
}

/** The value of a header that must be sent once, or undefined when it is absent or repeated. */
export function singleHeader(req: IncomingMessage, lowerName: string): string | undefined {
  const values = headerValues(req, lowerName);
  return values.length === 1 ? values[0] : undefined;
}
