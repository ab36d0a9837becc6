import { optionNumber } from '../../src/internal/option-number';

describe('a numeric option', () => {
  const option = (value: unknown) => optionNumber(value, 50, 'timeout', 1, 100);

  it('is the fallback when absent', () => {
    expect(option(undefined)).toBe(50);
  });

  it('is the value from the least to the greatest allowed, both included', () => {
    for (const value of [1, 1.5, 99.9, 100]) expect(option(value)).toBe(value);
  });

  it.each([0, 0.999, 100.001, -1, Number.NaN, Number.POSITIVE_INFINITY, '10', null])('is refused with a RangeError at setup: %p', (value) => {
    expect(() => option(value)).toThrow(RangeError);
  });
});
