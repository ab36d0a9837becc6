import fc from 'fast-check';
import { equalBytes } from '../../../src/verify/mac';

const bytes = (...b: number[]) => new Uint8Array(b);

describe('equalBytes, the constant-time comparison of MACs', () => {
  it('is true for the same bytes, also in different arrays and views', () => {
    expect(equalBytes(bytes(1, 2, 3), bytes(1, 2, 3))).toBe(true);
    expect(equalBytes(new Uint8Array(0), new Uint8Array(0))).toBe(true);
    expect(equalBytes(bytes(9, 1, 2, 3).subarray(1), Buffer.from([1, 2, 3]))).toBe(true);
  });

  it.each([
    ['the first byte', bytes(0, 2, 3)],
    ['a middle byte', bytes(1, 0, 3)],
    ['the last byte', bytes(1, 2, 0)],
    ['one bit of the last byte', bytes(1, 2, 2)],
    ['every byte', bytes(254, 253, 252)],
  ])('is false when %s differs', (_where, other) => {
    expect(equalBytes(bytes(1, 2, 3), other)).toBe(false);
    expect(equalBytes(other, bytes(1, 2, 3))).toBe(false);
  });

  it('is false for arrays of other lengths, even when one begins with the other', () => {
    expect(equalBytes(bytes(1, 2), bytes(1, 2, 3))).toBe(false);
    expect(equalBytes(bytes(1, 2, 3), bytes(1, 2))).toBe(false);
    expect(equalBytes(new Uint8Array(0), bytes(0))).toBe(false);
  });

  it('agrees with a plain comparison on any two arrays', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (a, b) => {
        expect(equalBytes(a, b)).toBe(Buffer.from(a).equals(Buffer.from(b)));
        expect(equalBytes(a, a.slice())).toBe(true);
      }),
    );
  });

  it('compares every byte whatever the first difference: no early exit', () => {
    // A comparison that stops early reads fewer bytes; a Proxy counts the reads.
    const reads = (other: Uint8Array) => {
      let count = 0;
      const counted = new Proxy(new Uint8Array(32), {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) count++;
          const value = Reflect.get(target, key, target) as unknown;
          return typeof value === 'function'
            ? (value as (...a: unknown[]) => unknown).bind(target)
            : value === undefined
              ? Reflect.get(target, key, receiver)
              : value;
        },
      });
      equalBytes(counted, other);
      return count;
    };
    const first = new Uint8Array(32);
    first[0] = 1;
    expect(reads(first)).toBe(32);
    expect(reads(new Uint8Array(32))).toBe(32);
  });
});
