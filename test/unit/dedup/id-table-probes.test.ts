import { IdTable } from '../../../src/dedup/id-table';

/** A fixed stream of distinct non-zero 32-bit words (xorshift32): ids in no pattern of their own. */
function wordStream(seed: number): () => number {
  let s = seed;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
}

/**
 * Distinct ids of one kind: made of four random words (`'all'`), or zero in every word but
 * `position`. An empty slot is all zeros, and a lookup compares all four words: ids zero in three
 * of them are the ones a lookup that judged a slot by fewer words would take for another.
 */
function idSource(position: number | 'all', seed = 0x2545f491): () => Uint32Array {
  const next = wordStream(seed);
  return () => {
    if (position === 'all') return Uint32Array.of(next(), next(), next(), next());
    const w = new Uint32Array(4);
    w[position] = next();
    return w;
  };
}

/**
 * `count` ids that share the slot of the one id `table` holds: a lookup of such an id reads two
 * slots, its own (which holds that other id) and the empty one after it; any other reads one.
 */
function sameSlotAs(table: IdTable, next: () => Uint32Array, count: number): Uint32Array[] {
  const found: Uint32Array[] = [];
  for (let tries = 0; tries < 200_000 && found.length < count; tries++) {
    const id = next();
    if (table.probes(id) === 2) found.push(id);
  }
  return found;
}

const KINDS: Array<[string, number | 'all']> = [
  ['random in all four words', 'all'],
  ['zero but for word 0', 0],
  ['zero but for word 1', 1],
  ['zero but for word 2', 2],
  ['zero but for word 3', 3],
];

describe('how many slots a lookup in the id table reads', () => {
  it('reads one slot, its own, in an empty table', () => {
    const table = new IdTable();
    const next = idSource('all');
    for (let i = 0; i < 100; i++) expect(table.probes(next())).toBe(1);
  });

  it.each(KINDS)('reads the ids put in its slot before it, one slot each, and stops at the empty slot after them (ids %s)', (_what, position) => {
    const table = new IdTable();
    const next = idSource(position);
    const first = next();
    table.add(first);
    const same = sameSlotAs(table, next, 8);
    expect(same).toHaveLength(8);
    const added = same.slice(0, 7);
    const absent = same[7]!;
    for (const id of added) table.add(id);
    expect([first, ...added].map((id) => table.probes(id))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(table.has(absent)).toBe(false);
    expect(table.probes(absent)).toBe(9);
  });

  it.each(KINDS)(
    'reads as many slots for an id it does not hold as for that id once added: where it stops is where the id goes (ids %s)',
    (_what, position) => {
      const table = new IdTable();
      const next = idSource(position, 0x1b873593);
      const ids = Array.from({ length: 700 }, next);
      const before: number[] = [];
      for (const id of ids) {
        before.push(table.probes(id));
        table.add(id);
      }
      expect(table.size).toBe(700);
      expect(ids.map((id) => table.probes(id))).toEqual(before);
      // At 700 ids in 1,024 slots a lookup often finds its slot taken and reads on.
      expect(before.filter((n) => n > 1).length).toBeGreaterThan(100);
    },
  );
});

describe('where the id table puts ids a signer chose', () => {
  // The slot is the top bits of a hash keyed with odd multipliers: the top bit of any one word reaches it.
  it('gives ids that differ only in the top bit of one word slots of their own, in table after table', () => {
    const next = wordStream(0x68e31da4);
    let shared = 0;
    for (let t = 0; t < 20; t++) {
      for (let k = 0; k < 4; k++) {
        const table = new IdTable();
        const id = Uint32Array.of(next(), next(), next(), next());
        table.add(id);
        const twin = Uint32Array.from(id);
        twin[k] = (twin[k]! ^ 0x8000_0000) >>> 0;
        if (table.probes(twin) > 1) shared++;
      }
    }
    // Keys whatever their choice share a slot with a chance of about 2 / 1,024: of 80 pairs, hardly any.
    expect(shared).toBeLessThanOrEqual(4);
  });
});
