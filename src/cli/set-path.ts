import { usageError } from './cli-error';
import { printable } from './format';

/** One `--set <path>=<value>`: where in the event, and the value to put there. */
export interface Setting {
  readonly path: readonly string[];
  readonly value: unknown;
}

// Keys that reach an object's prototype instead of a field of the event.
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const INDEX = /^(0|[1-9][0-9]{0,8})$/;

/** The value as JSON when it parses (3, true, null, {...}, [...], "3"), else the text itself. */
function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * `--set task.title=Fix login`: a dot path and a value. The errors name the flag and, when it is
 * well formed, the path, never the value (it may be anything a user pasted).
 */
export function parseSetting(text: string): Setting {
  const equals = text.indexOf('=');
  if (equals <= 0) throw usageError('--set takes <path>=<value>, a dot path into the event such as task.title=Fix');
  const path = text.slice(0, equals).split('.');
  if (path.some((segment) => segment === '')) throw usageError('--set needs a dot path without empty segments, such as task.title');
  const forbidden = path.find((segment) => FORBIDDEN.has(segment));
  if (forbidden !== undefined) throw usageError(`--set cannot set through "${forbidden}": it names an object's prototype, not a field of the event`);
  if (path.length === 1 && path[0] === 'id') throw usageError('--set cannot set the delivery id; use --id');
  return { path, value: parseValue(text.slice(equals + 1)) };
}

function shown(path: readonly string[], upTo: number): string {
  return printable(path.slice(0, upTo).join('.'));
}

/** The container the next segment goes into: an array is entered by index, an object by key (created when missing or null). */
function step(container: Record<string, unknown> | unknown[], segment: string, path: readonly string[], depth: number): Record<string, unknown> | unknown[] {
  if (Array.isArray(container)) {
    const index = INDEX.test(segment) ? Number(segment) : Number.NaN;
    if (!(index < container.length))
      throw usageError(
        `--set ${shown(path, path.length)}: ${shown(path, depth)} is a list of ${container.length} items, and ${printable(segment)} is not an index in it`,
      );
    const item = container[index];
    if (typeof item !== 'object' || item === null)
      throw usageError(`--set ${shown(path, path.length)}: ${shown(path, depth + 1)} is not an object to set a field in`);
    return item as Record<string, unknown> | unknown[];
  }
  const current = Object.hasOwn(container, segment) ? container[segment] : undefined;
  if (current === undefined || current === null) {
    const created: Record<string, unknown> = {};
    container[segment] = created;
    return created;
  }
  if (typeof current !== 'object')
    throw usageError(`--set ${shown(path, path.length)}: ${shown(path, depth + 1)} is a ${typeof current}, not an object to set a field in`);
  return current as Record<string, unknown> | unknown[];
}

/**
 * Puts `setting.value` at its path in `payload`, in place. Objects missing (or null) along the path
 * are created; a list is entered by index (0 to its length, where its length appends); a string,
 * number or boolean on the way is refused, as is a key other than an index into a list.
 */
export function applySetting(payload: Record<string, unknown>, { path, value }: Setting): void {
  let container: Record<string, unknown> | unknown[] = payload;
  for (let depth = 0; depth < path.length - 1; depth++) container = step(container, path[depth]!, path, depth);
  const last = path[path.length - 1]!;
  if (Array.isArray(container)) {
    const index = INDEX.test(last) ? Number(last) : Number.NaN;
    if (!(index <= container.length))
      throw usageError(
        `--set ${shown(path, path.length)}: ${shown(path, path.length - 1)} is a list of ${container.length} items, and ${printable(last)} is not an index in it or its end`,
      );
    container[index] = value;
    return;
  }
  container[last] = value;
}
