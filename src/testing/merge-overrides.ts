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
    const current = target[key];
    target[key] = isPlainObject(value) && isPlainObject(current) ? mergeOverrides(current, value) : structuredClone(value);
  }
  return base;
}
