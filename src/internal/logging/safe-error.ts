import { SvcWebhookError } from '../../errors';

// A cause chain or an aggregate nested deeper than this is cut: a hostile value can be cyclic.
const MAX_DEPTH = 4;
const MAX_ERRORS = 10;

/**
 * A copy of any value that user code threw or rejected with, as a plain Error that is safe to log:
 * its name, message, stack, code, cause and aggregated errors are read once, each read guarded, so
 * a getter that throws, a revoked Proxy or a `toString` that throws yields a placeholder instead.
 * Loggers serialise errors by reading their properties; a hostile value must never reach one as it
 * is. An SvcWebhookError stays one (its code kept), with its cause made safe the same way.
 */
export function safeError(value: unknown, depth = 0): Error {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
    // String() describes a symbol too (only implicit conversion of a symbol throws).
    return described(new Error(String(value)), value === null ? 'null' : typeof value, undefined);
  }
  const read = (key: string): unknown => {
    try {
      return (value as Record<string, unknown>)[key];
    } catch {
      return undefined;
    }
  };
  const name = read('name');
  const message = read('message');
  const text = typeof message === 'string' ? message : objectText(value);
  const type = typeof name === 'string' && name !== '' ? name : constructorName(value);
  const code = read('code');
  const errors = depth < MAX_DEPTH ? listOf(read('errors')) : undefined;
  const safeCause = depth < MAX_DEPTH && has(value, 'cause') ? { cause: safeError(read('cause'), depth + 1) } : undefined;
  let copy: Error;
  if (isOwnError(value) && typeof code === 'string') copy = new SvcWebhookError(code as SvcWebhookError['code'], text, safeCause);
  else if (errors !== undefined)
    copy = new AggregateError(
      errors.map((e) => safeError(e, depth + 1)),
      text,
      safeCause,
    );
  else copy = new Error(text, safeCause);
  if (!(copy instanceof SvcWebhookError) && (typeof code === 'string' || typeof code === 'number')) Object.assign(copy, { code: String(code) });
  const stack = read('stack');
  return described(copy, type, typeof stack === 'string' ? stack : undefined);
}

function described(copy: Error, type: string, stack: string | undefined): Error {
  if (!(copy instanceof SvcWebhookError)) Object.defineProperty(copy, 'name', { value: type, configurable: true, writable: true });
  // A value that was not an Error has no stack worth showing; this copy's own would mislead.
  Object.defineProperty(copy, 'stack', { value: stack ?? `${type}: ${copy.message}`, configurable: true, writable: true });
  return copy;
}

function has(value: object, key: string): boolean {
  try {
    return key in value;
  } catch {
    return false;
  }
}

function isOwnError(value: object): boolean {
  try {
    return value instanceof SvcWebhookError;
  } catch {
    return false; // a revoked Proxy
  }
}

function objectText(value: object): string {
  try {
    return String(value); // a string, or it throws
  } catch {
    return 'a thrown object that cannot be described';
  }
}

function constructorName(value: object): string {
  try {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === 'string' && name !== '' ? name : 'Object';
  } catch {
    return 'unknown';
  }
}

function listOf(value: unknown): unknown[] | undefined {
  try {
    return Array.isArray(value) ? value.slice(0, MAX_ERRORS) : undefined;
  } catch {
    return undefined; // a revoked Proxy, or an array whose elements throw
  }
}
