/**
 * Checks of plain values that every stage makes: is it awaitable, a JSON object, an svc id. One
 * module, so the delivery path does not open three files for three one-line functions.
 */

/** True for a promise or any object a `then` makes awaitable. */
export function isThenable<T>(value: unknown): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** A plain JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Whether `id` is a UUID in its 8-4-4-4-12 form of hexadecimal digits, in either case: the form of
 * every id svc gives a board, a bot user and a delivery.
 */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/**
 * Whether `id` can be the id of an svc board or bot user: a UUID written as svc writes every id,
 * in lower case. A secret resolver is asked about nothing else.
 */
export function isSvcResourceId(id: string): boolean {
  return isUuid(id) && id === id.toLowerCase();
}

/** What `compute` returns, or undefined when it throws: for a value that is only nice to have (the delivery a refused payload names). */
export function unlessThrown<T>(compute: () => T): T | undefined {
  try {
    return compute();
  } catch {
    return undefined;
  }
}
