/** Every field optional, at any depth; arrays are replaced whole, not merged. */
export type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Applies `overrides` onto `base` in place: objects are merged key by key, anything else
 * (arrays, null, primitives) replaces the base value, and `undefined` leaves it as it is.
 */
export function mergeOverrides<T>(base: T, overrides: unknown): T {
  if (!isPlainObject(overrides)) return base;
  const target = base as Record<string, unknown>;
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    // An own `__proto__` key (from JSON.parse) would otherwise reach Object.prototype through the merge.
    if (key === '__proto__') throw new TypeError('svc-webhooks/testing: an override must not hold a `__proto__` key');
    const current = Object.prototype.hasOwnProperty.call(target, key) ? target[key] : undefined;
    const next = isPlainObject(value) && isPlainObject(current) ? mergeOverrides(current, value) : structuredClone(value);
    Object.defineProperty(target, key, { value: next, writable: true, enumerable: true, configurable: true });
  }
  return base;
}
