import { usageError } from './cli-error';

/** Captured request headers: every value of each header, by lowercase name, in order. */
export type CapturedHeaders = ReadonlyMap<string, readonly string[]>;

// The value is trimmed apart: `[ \t]*(.*?)[ \t]*$` takes quadratic time on a long run of spaces.
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):(.*)$/;
const REQUEST_LINE = /^[A-Z]+ \S+ HTTP\/\d(\.\d)?$/;

function add(headers: Map<string, string[]>, name: string, value: string): void {
  const key = name.toLowerCase();
  // Appended in place: copying the list for every line is quadratic in a header's repeats.
  const values = headers.get(key);
  if (values === undefined) headers.set(key, [value]);
  else values.push(value);
}

function trimSpaces(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === ' ' || value[start] === '\t')) start++;
  while (end > start && (value[end - 1] === ' ' || value[end - 1] === '\t')) end--;
  return value.slice(start, end);
}

/** `Name: value` text: an optional request line, blank lines ignored. */
function fromLines(text: string, where: string, headers: Map<string, string[]>): void {
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '' || (index === 0 && REQUEST_LINE.test(line))) return;
    const match = HEADER_LINE.exec(line);
    if (!match) throw usageError(`${where}: line ${index + 1} is not "Name: value"`);
    add(headers, match[1]!, trimSpaces(match[2]!));
  });
}

/** A JSON object of header values, as loggers and request inspectors write them. */
function fromJson(value: unknown, where: string, headers: Map<string, string[]>): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw usageError(`${where}: a JSON headers file must hold an object`);
  for (const [name, v] of Object.entries(value)) {
    for (const item of Array.isArray(v) ? v : [v]) {
      if (typeof item !== 'string' && typeof item !== 'number') throw usageError(`${where}: the value of ${name} must be a string`);
      add(headers, name, String(item));
    }
  }
}

/**
 * Headers from a captured request: a file of `Name: value` lines or a JSON object, plus
 * `-H 'Name: value'` arguments.
 */
export function readCapturedHeaders(fileText: string | undefined, fileName: string | undefined, extra: readonly string[]): CapturedHeaders {
  const headers = new Map<string, string[]>();
  if (fileText !== undefined) {
    const where = fileName ?? 'headers';
    if (fileText.trimStart().startsWith('{')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(fileText);
      } catch {
        throw usageError(`${where}: starts with "{" but is not valid JSON`);
      }
      fromJson(parsed, where, headers);
    } else fromLines(fileText, where, headers);
  }
  for (const line of extra) fromLines(line, '-H', headers);
  return headers;
}
