import { IdTable, idWords } from '../../../src/dedup/id-table';

/** Ids as their four words, so that a test can choose which words are zero. */
function words(w0: number, w1: number, w2: number, w3: number): Uint32Array {
  return Uint32Array.of(w0, w1, w2, w3);
}

/**
 * A family of distinct ids whose only non-zero word is `position`. An empty slot is all zeros, so
 * a table that judged a slot empty by fewer than its four words would stop a probe too early for
 * some of these ids.
 */
function family(position: number, count: number, offset = 1): Uint32Array[] {
  return Array.from({ length: count }, (_, i) => {
    const w = new Uint32Array(4);
    w[position] = offset + i;
    return w;
  });
}

describe('the id table', () => {
  // 700 ids in 1,024 slots: below the 3/4 load that grows the table, so probe chains are long.
  it.each([0, 1, 2, 3])('finds every id whose only non-zero word is word %i, among many in long probe chains', (position) => {
    const table = new IdTable();
    const added = family(position, 700);
    for (const w of added) table.add(w);
    expect(table.size).toBe(700);
    expect(added.filter((w) => !table.has(w))).toEqual([]);
    expect(family(position, 700, 10_000).filter((w) => table.has(w))).toEqual([]);
  });

  it('tells apart ids that differ in one word only', () => {
    const table = new IdTable();
    table.add(words(1, 2, 3, 4));
    expect(table.has(words(1, 2, 3, 4))).toBe(true);
    for (const w of [words(9, 2, 3, 4), words(1, 9, 3, 4), words(1, 2, 9, 4), words(1, 2, 3, 9)]) expect(table.has(w)).toBe(false);
  });

  it('counts an id added twice once, the all-zero id included', () => {
    const table = new IdTable();
    const zero = words(0, 0, 0, 0);
    expect(table.has(zero)).toBe(false);
    table.add(zero);
    expect(table.size).toBe(1);
    table.add(zero);
    expect(table.size).toBe(1);
    table.add(words(0, 0, 0, 1));
    table.add(words(0, 0, 0, 1));
    expect(table.size).toBe(2);
    expect(table.has(zero)).toBe(true);
  });

  it('keeps every id when it grows, and doubles its storage', () => {
    const table = new IdTable();
    const before = table.bytes;
    const added = family(3, 5000);
    for (const w of added) table.add(w);
    expect(table.bytes).toBeGreaterThanOrEqual(before * 8);
    expect(added.filter((w) => !table.has(w))).toEqual([]);
    expect(table.size).toBe(5000);
  });

  it('grows to twice its slots once an id would fill more than 3/4 of them', () => {
    const table = new IdTable();
    const initial = table.bytes;
    const added = family(3, 769);
    for (const w of added.slice(0, 768)) table.add(w);
    expect(table.bytes).toBe(initial);
    table.add(added[768]!);
    expect(table.bytes).toBe(initial * 2);
  });

  it('reads a UUID as its own 128 bits, in either case', () => {
    const out = new Uint32Array(4);
    idWords('01234567-89ab-cdef-0123-456789abcdef', out);
    expect([...out]).toEqual([0x01234567, 0x89abcdef, 0x01234567, 0x89abcdef]);
    idWords('01234567-89AB-CDEF-0123-456789ABCDEF', out);
    expect([...out]).toEqual([0x01234567, 0x89abcdef, 0x01234567, 0x89abcdef]);
    idWords('01234567-89ab-cdef-fedc-ba9876543210', out);
    expect([...out]).toEqual([0x01234567, 0x89abcdef, 0xfedcba98, 0x76543210]);
  });
});

describe('the words of an id that is not a UUID', () => {
  it('come from its hash, so two 36-character ids that are not UUIDs differ', () => {
    const a = new Uint32Array(4);
    const b = new Uint32Array(4);
    idWords('x'.repeat(36), a);
    idWords('y'.repeat(36), b);
    expect([...a]).not.toEqual([...b]);
    expect([...a]).not.toEqual([0, 0, 0, 0]);
  });
});

describe('an id table that has grown', () => {
  // Growing moves every occupied slot; a slot is occupied when any one of its four words is not zero.
  it.each([0, 1, 2, 3])('keeps every id whose only non-zero word is word %i', (position) => {
    const table = new IdTable();
    const initial = table.bytes;
    const added = family(position, 2000);
    for (const w of added) table.add(w);
    expect(table.bytes).toBeGreaterThanOrEqual(initial * 4);
    expect(table.size).toBe(2000);
    expect(added.filter((w) => !table.has(w))).toEqual([]);
    expect(family(position, 2000, 10_000).filter((w) => table.has(w))).toEqual([]);
  });

  it('still holds every key, once, after growing several times', () => {
    const table = new IdTable();
    const initial = table.bytes;
    const key = (n: number) => new Uint32Array([n, n * 7, n * 13, n * 31]);
    for (let n = 1; n <= 5000; n++) table.add(key(n));
    for (let n = 1; n <= 5000; n++) table.add(key(n));
    expect(table.bytes).toBeGreaterThanOrEqual(initial * 8);
    expect(table.size).toBe(5000);
    for (let n = 1; n <= 5000; n++) expect(table.has(key(n))).toBe(true);
    expect(table.has(key(5001))).toBe(false);
  });
});

/**
 * The slot hash of a table keyed with nothing, as anyone could compute it offline (the table's hash
 * before it was keyed): the words that the attack below aims at one slot.
 */
function unkeyedBeforeFinal(w0: number, w1: number, w2: number): number {
  let h = Math.imul(w0 ^ Math.imul(w1, 0x9e3779b1), 0x85ebca6b);
  h ^= Math.imul(w2 ^ (h >>> 15), 0xc2b2ae35);
  return h;
}

/**
 * `count` distinct UUID-like ids chosen so that an unkeyed hash sends every one to the same slot at
 * any capacity: the fourth word cancels whatever the first three made.
 */
function chosenToCollide(count: number): Uint32Array[] {
  return Array.from({ length: count }, (_, i) => {
    const h = unkeyedBeforeFinal(i + 1, 0x4000_8000, i * 2654435761);
    return Uint32Array.of(i + 1, 0x4000_8000, (i * 2654435761) >>> 0, (0x1234_5678 ^ h ^ (h >>> 13)) >>> 0);
  });
}

describe('an id table fed ids a signer chose to collide', () => {
  const ids = chosenToCollide(4000);

  it('the chosen ids do collide under the unkeyed hash (the attack is real)', () => {
    const finals = new Set(ids.map((w) => (unkeyedBeforeFinal(w[0]!, w[1]!, w[2]!) ^ w[3]! ^ (unkeyedBeforeFinal(w[0]!, w[1]!, w[2]!) >>> 13)) >>> 0));
    expect(finals.size).toBe(1);
  });

  it('spreads them over its slots: lookups read a few slots, not a pile of thousands', () => {
    const table = new IdTable();
    for (const w of ids) table.add(w);
    expect(table.size).toBe(ids.length);
    const probes = ids.map((w) => table.probes(w));
    const mean = probes.reduce((a, b) => a + b, 0) / probes.length;
    // Random slots at this load (under 1/2) average about 1.5 reads; one pile would average 2,000.
    expect(mean).toBeLessThan(3);
    expect(Math.max(...probes)).toBeLessThan(64);
  });

  it('is keyed anew for each table: two tables lay the same ids out differently', () => {
    const [a, b] = [new IdTable(), new IdTable()];
    for (const w of ids) {
      a.add(w);
      b.add(w);
    }
    expect(ids.map((w) => a.probes(w))).not.toEqual(ids.map((w) => b.probes(w)));
  });
});
