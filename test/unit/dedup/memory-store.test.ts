import { randomUUID } from 'node:crypto';
import { memoryStore } from '../../../src';
import { IdTable, idWords } from '../../../src/dedup/id-table';
import { DEFAULT_RETENTION_MS } from '../../../src/dedup/delivery-store';

const HOUR = 3600_000;

function claimToken(result: ReturnType<ReturnType<typeof memoryStore>['claim']>): string {
  if (result.state !== 'claimed') throw new Error(`expected a claim, got ${result.state}`);
  return result.token;
}

describe('memory store', () => {
  it('claims an id once; a second claim is busy until the first is committed, then done', () => {
    const store = memoryStore();
    const token = claimToken(store.claim('a', 60_000));
    expect(store.claim('a', 60_000).state).toBe('busy');
    store.commit('a', token);
    expect(store.claim('a', 60_000).state).toBe('done');
  });

  it('a released claim can be claimed again', () => {
    const store = memoryStore();
    store.release('a', claimToken(store.claim('a', 60_000)));
    expect(store.claim('a', 60_000).state).toBe('claimed');
  });

  it('a lapsed lease lets a retry claim the id; the stale holder cannot release the new claim', () => {
    let now = 0;
    const store = memoryStore({ now: () => now });
    const stale = claimToken(store.claim('a', 1000));
    now = 1001;
    claimToken(store.claim('a', 1000));
    store.release('a', stale);
    expect(store.claim('a', 1000).state).toBe('busy');
  });

  it('remembers a done id for the whole retention window, and forgets it after at most 1.25 windows', () => {
    let now = 0;
    const store = memoryStore({ now: () => now, retentionMs: 24 * HOUR });
    store.commit('a', claimToken(store.claim('a', 1000)));
    for (const t of [1, 6, 12, 23, 24]) {
      now = t * HOUR;
      expect(store.claim('a', 1000).state).toBe('done');
    }
    now = 30 * HOUR + 1;
    const later = store.claim('a', 1000);
    expect(later.state).toBe('claimed');
  });

  it('treats upper- and lower-case UUIDs and non-UUID ids as ids', () => {
    const store = memoryStore();
    const id = randomUUID();
    store.commit(id, claimToken(store.claim(id, 1000)));
    expect(store.claim(id.toUpperCase(), 1000).state).toBe('done');
    store.commit('not a uuid', claimToken(store.claim('not a uuid', 1000)));
    expect(store.claim('not a uuid', 1000).state).toBe('done');
    expect(store.claim('not a uuid!', 1000).state).toBe('claimed');
    store.commit('00000000-0000-0000-0000-000000000000', claimToken(store.claim('00000000-0000-0000-0000-000000000000', 1000)));
    expect(store.claim('00000000-0000-0000-0000-000000000000', 1000).state).toBe('done');
  });

  it('stays bounded under a flood of distinct ids, forgetting the oldest first and warning that it cut into the window', () => {
    const warn = jest.fn();
    const store = memoryStore({ maxIds: 10_000, logger: { warn } as never });
    const ids = Array.from({ length: 25_000 }, () => randomUUID());
    for (const id of ids) store.commit(id, claimToken(store.claim(id, 1000)));
    const { ids: kept } = store.stats();
    expect(kept).toBeLessThanOrEqual(10_000);
    expect(kept).toBeGreaterThan(0);
    expect(store.claim(ids[ids.length - 1]!, 1000).state).toBe('done');
    expect(store.claim(ids[0]!, 1000).state).toBe('claimed');
    expect(warn).toHaveBeenCalled();
    expect(warn.mock.calls[0][1]).toMatch(/retry window/);
  });

  describe('at its bound (maxIds)', () => {
    it('never forgets the newest ids: after 101 deliveries into 100 places, each of the last 80 is still a duplicate', () => {
      const store = memoryStore({ maxIds: 100 });
      const ids = Array.from({ length: 101 }, () => randomUUID());
      for (const id of ids) store.commit(id, claimToken(store.claim(id, 1000)));
      expect(store.stats().ids).toBeLessThanOrEqual(100);
      for (const id of ids.slice(-80)) expect(store.claim(id, 1000).state).toBe('done');
    });

    it('forgets the oldest ids first, an eighth of the bound at a time', () => {
      const store = memoryStore({ maxIds: 80 });
      const ids = Array.from({ length: 81 }, () => randomUUID());
      for (const id of ids) store.commit(id, claimToken(store.claim(id, 1000)));
      expect(store.stats().ids).toBe(71);
      for (const id of ids.slice(0, 10)) expect(store.claim(id, 1000).state).toBe('claimed');
      for (const id of ids.slice(10)) expect(store.claim(id, 1000).state).toBe('done');
    });

    it('keeps the one id it was just given even with a bound below one id', () => {
      const store = memoryStore({ maxIds: 0.5 });
      store.commit('a', claimToken(store.claim('a', 1000)));
      expect(store.stats()).toMatchObject({ ids: 1, generations: 1 });
      expect(store.claim('a', 1000).state).toBe('done');
    });

    it('keeps the one id it was just given even with a bound of 1', () => {
      const store = memoryStore({ maxIds: 1 });
      store.commit('a', claimToken(store.claim('a', 1000)));
      store.commit('b', claimToken(store.claim('b', 1000)));
      expect(store.claim('b', 1000).state).toBe('done');
      expect(store.claim('a', 1000).state).toBe('claimed');
    });

    it('warns how far eviction cut into the retry window: ids are remembered only as long as the newest one forgotten is old', () => {
      let now = 0;
      const warn = jest.fn();
      const store = memoryStore({ maxIds: 16, now: () => now, logger: { warn } as never, retentionMs: 24 * HOUR });
      // Two ids a minute: the 17th id, at 8 min, makes the store forget the first two (0 and 0.5 min old).
      for (let i = 0; i < 17; i++) {
        now = i * 30_000;
        const id = randomUUID();
        store.commit(id, claimToken(store.claim(id, 1000)));
      }
      expect(warn).toHaveBeenCalledTimes(1);
      const [fields, message] = warn.mock.calls[0];
      expect(fields).toEqual({ evicted: 2, rememberedMs: 7.5 * 60_000, retentionMs: 24 * HOUR, windowCutMs: 24 * HOUR - 7.5 * 60_000, maxIds: 16 });
      expect(message).toContain('7.5 min of the 24.0 h retry window');
    });
  });

  it('costs well under 64 bytes per remembered id', () => {
    const store = memoryStore({ maxIds: 200_000 });
    for (let i = 0; i < 100_000; i++) {
      const id = randomUUID();
      store.commit(id, claimToken(store.claim(id, 1000)));
    }
    const { ids, bytes } = store.stats();
    expect(ids).toBe(100_000);
    expect(bytes / ids).toBeLessThan(64);
    // Every id takes its 16 bytes of words in some table.
    expect(bytes / ids).toBeGreaterThanOrEqual(16);
  });
});

describe('id table', () => {
  it('holds exactly the ids added, across growth', () => {
    const table = new IdTable();
    const w = new Uint32Array(4);
    const ids = Array.from({ length: 5000 }, () => randomUUID());
    for (const id of ids.slice(0, 2500)) {
      idWords(id, w);
      table.add(w);
    }
    for (const [i, id] of ids.entries()) {
      idWords(id, w);
      expect(table.has(w)).toBe(i < 2500);
    }
    expect(table.size).toBe(2500);
  });

  it.each([0, 1, 2, 3])('tells apart keys that differ only in word %i, even inside one probe chain', (word) => {
    const table = new IdTable();
    const key = (n: number) => {
      const w = new Uint32Array([0x9e3779b9, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f]);
      w[word] = n;
      return w;
    };
    // 700 keys in 1024 slots: probe chains are long, and every key shares three words with the rest.
    for (let n = 1; n <= 700; n++) table.add(key(n));
    for (let n = 1; n <= 700; n++) expect(table.has(key(n))).toBe(true);
    for (let n = 701; n <= 1400; n++) expect(table.has(key(n))).toBe(false);
    expect(table.size).toBe(700);
  });

  it('keeps the all-zero key, which marks empty slots, apart', () => {
    const table = new IdTable();
    const zero = new Uint32Array(4);
    expect(table.has(zero)).toBe(false);
    table.add(zero);
    table.add(zero);
    expect(table.has(zero)).toBe(true);
    expect(table.size).toBe(1);
  });
});

describe('claims and closing', () => {
  it('drops a lapsed claim whose holder never settled within a minute, though its id is never claimed again', () => {
    let now = 0;
    const store = memoryStore({ now: () => now });
    store.claim('abandoned', 1000);
    now = 60_000;
    store.claim('other', 120_000);
    expect(store.stats().claims).toBe(1);
    // A claim whose lease ends exactly now has lapsed too.
    now = 180_000;
    store.claim('third', 1000);
    expect(store.stats().claims).toBe(1);
  });

  it('sweeps at most once a minute, from the first claim on', () => {
    let now = 0;
    const store = memoryStore({ now: () => now });
    store.claim('abandoned', 1000);
    now = 30_000;
    store.claim('other', 120_000);
    expect(store.stats().claims).toBe(2);
  });

  it('lets a retry claim an id whose lease ends exactly now', () => {
    let now = 0;
    const store = memoryStore({ now: () => now });
    store.claim('a', 1000);
    now = 1000;
    expect(store.claim('a', 1000).state).toBe('claimed');
  });

  it('keeps a claim whose lease still runs at the sweep', () => {
    let now = 0;
    const store = memoryStore({ now: () => now });
    store.claim('long', 200_000);
    now = 60_000;
    store.claim('other', 1000);
    expect(store.stats().claims).toBe(2);
  });

  it('forgets every id and claim when closed', () => {
    const store = memoryStore();
    store.commit('a', claimToken(store.claim('a', 60_000)));
    store.claim('b', 60_000);
    store.close();
    expect(store.stats()).toEqual({ ids: 0, claims: 0, bytes: 0, generations: 0 });
    expect(store.claim('a', 60_000).state).toBe('claimed');
  });
});

describe('retention', () => {
  it("is the sender's one-day retry window plus an hour for clock skew, by default", () => {
    expect(DEFAULT_RETENTION_MS).toBe(25 * HOUR);
    expect(memoryStore().retentionMs).toBe(25 * HOUR);
  });
});

describe('options', () => {
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses a retentionMs or maxIds of %p with a RangeError', (bad) => {
    expect(() => memoryStore({ retentionMs: bad })).toThrow(RangeError);
    expect(() => memoryStore({ maxIds: bad })).toThrow(RangeError);
  });
});

describe('extending a claim', () => {
  it("moves the lease end of the holder's claim", () => {
    let now = 0;
    const store = memoryStore({ now: () => now });
    const token = claimToken(store.claim('a', 1000));
    now = 900;
    store.extend('a', token, 1000);
    now = 1800;
    expect(store.claim('a', 1000).state).toBe('busy');
  });

  it('does nothing for a token that does not hold the claim', () => {
    let now = 0;
    const store = memoryStore({ now: () => now });
    claimToken(store.claim('a', 1000));
    store.extend('a', 'not the token', 60_000);
    now = 1000;
    expect(store.claim('a', 1000).state).toBe('claimed');
  });

  it('does nothing for an id nobody claimed', () => {
    const store = memoryStore();
    expect(() => store.extend('never', '1', 60_000)).not.toThrow();
    expect(store.stats().claims).toBe(0);
    expect(store.claim('never', 1000).state).toBe('claimed');
  });
});

describe('generations of remembered ids', () => {
  const retentionMs = 24 * HOUR;

  it('forgets the ids of a generation exactly one retention after it stopped taking ids, and counts them no more', () => {
    let now = 0;
    const store = memoryStore({ now: () => now, retentionMs });
    store.commit('a', claimToken(store.claim('a', 1000)));
    // The first generation spans a quarter of the retention (6 h): 'b', at 10 h, starts the next.
    now = 10 * HOUR;
    store.commit('b', claimToken(store.claim('b', 1000)));
    expect(store.stats()).toMatchObject({ ids: 2, generations: 2 });
    now = 30 * HOUR - 1;
    expect(store.claim('a', 1000).state).toBe('done');
    now = 30 * HOUR;
    expect(store.claim('b', 1000).state).toBe('done');
    expect(store.stats()).toMatchObject({ ids: 1, generations: 1 });
    expect(store.claim('a', 1000).state).toBe('claimed');
  });

  it('ends a full generation when the next id comes, so its ids are forgotten one retention after its newest', () => {
    let now = 0;
    // maxIds 8: a generation holds one id.
    const store = memoryStore({ now: () => now, retentionMs, maxIds: 8 });
    store.commit('a', claimToken(store.claim('a', 1000)));
    now = 1 * HOUR;
    store.commit('b', claimToken(store.claim('b', 1000)));
    now = 25 * HOUR - 1;
    expect(store.claim('a', 1000).state).toBe('done');
    now = 25 * HOUR;
    expect(store.claim('b', 1000).state).toBe('done');
    expect(store.claim('a', 1000).state).toBe('claimed');
    expect(store.stats()).toMatchObject({ ids: 1 });
  });

  it('evicts at the bound without a warning when the ids forgotten were already kept a whole retention', () => {
    let now = 0;
    const warn = jest.fn();
    const store = memoryStore({ now: () => now, retentionMs, maxIds: 8, logger: { warn } as never });
    store.commit('first', claimToken(store.claim('first', 1000)));
    now = 23 * HOUR;
    for (let i = 1; i < 8; i++) store.commit(`id-${i}`, claimToken(store.claim(`id-${i}`, 1000)));
    expect(store.stats().ids).toBe(8);
    // 'first' is now exactly one retention old; its generation (ended at 6 h) has not expired yet.
    now = 24 * HOUR;
    store.commit('last', claimToken(store.claim('last', 1000)));
    expect(store.stats().ids).toBe(8);
    expect(warn).not.toHaveBeenCalled();
    expect(store.claim('first', 1000).state).toBe('claimed');
  });

  it('warns when the ids forgotten at the bound were kept a moment less than the retention', () => {
    let now = 0;
    const warn = jest.fn();
    const store = memoryStore({ now: () => now, retentionMs, maxIds: 8, logger: { warn } as never });
    store.commit('first', claimToken(store.claim('first', 1000)));
    now = 23 * HOUR;
    for (let i = 1; i < 8; i++) store.commit(`id-${i}`, claimToken(store.claim(`id-${i}`, 1000)));
    now = 24 * HOUR - 1;
    store.commit('last', claimToken(store.claim('last', 1000)));
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatchObject({ evicted: 1, rememberedMs: 24 * HOUR - 1, windowCutMs: 1 });
  });
});
