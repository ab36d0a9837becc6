/** `value` under `levels` objects of one field each: at depth `levels` of a line's field. */
export function nested(value: unknown, levels: number): Record<string, unknown> {
  let out: Record<string, unknown> = { deeper: value };
  for (let i = 1; i < levels; i++) out = { deeper: out };
  return out;
}

/** What `nested(value, levels)` holds at its depth `levels`. */
export function unnested(value: unknown, levels: number): unknown {
  let out = value;
  for (let i = 0; i < levels; i++) out = (out as { deeper: unknown }).deeper;
  return out;
}
