/**
 * Whether two byte arrays are equal, in a time that depends only on their length: every byte is
 * compared, however early they differ, so a forger cannot learn a MAC byte by byte from timing.
 */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  // Stryker disable next-line EqualityOperator: one index past the end XORs undefined with undefined, 0 (test/mutation/EQUIVALENT.core.md)
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
