/** A numeric option: `fallback` when absent, else a finite number from `min` to `max`, or a RangeError at setup. */
export function optionNumber(value: unknown, fallback: number, name: string, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new RangeError(`svc-webhooks: \`${name}\` must be a number from ${min} to ${max}`);
  }
  return value;
}
