/**
 * A seeded pseudo-random source (mulberry32): the same seed gives the same chaos, so a test that
 * found a bug with one seed finds it again.
 */
export interface Random {
  /** A number in [0, 1). */
  next(): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** `items` shuffled in place in blocks of `window`, so none moves further than `window - 1` places. */
  shuffleWithin<T>(items: T[], window: number): T[];
}

/** A random source seeded with `seed` (any 32-bit integer). */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    chance: (p) => p > 0 && next() < p,
    shuffleWithin(items, window) {
      if (window < 2) return items;
      for (let start = 0; start < items.length; start += window) {
        const end = Math.min(start + window, items.length);
        for (let i = end - 1; i > start; i--) {
          const j = start + Math.floor(next() * (i - start + 1));
          [items[i], items[j]] = [items[j]!, items[i]!];
        }
      }
      return items;
    },
  };
}
