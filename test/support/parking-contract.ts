import { randomBytes, randomUUID } from 'node:crypto';
import type { ParkedDelivery, ParkingLot } from '../../src/dedup/parking-lot';

/** The options of a store's parking lot that the contract sets. */
export interface LotOptions {
  retentionMs?: number;
  parkedRetentionMs?: number;
  maxParked?: number;
}

/** How the contract reaches one kind of store. */
export interface ParkingHarness {
  /** A store whose lot is empty and its own (a fresh prefix or table), closed after the file. */
  open(options?: LotOptions): Promise<{ readonly parking?: ParkingLot }>;
  /** A store whose server takes connections nowhere (a closed port), with this command timeout. */
  unreachable(commandTimeoutMs: number): Promise<{ readonly parking?: ParkingLot }>;
  /**
   * A store of a live server, with this command timeout, and how to freeze that server (SIGSTOP) and
   * thaw it. A Redis Cluster has none: its nodes frozen past their node timeout fail over.
   */
  freezable?(commandTimeoutMs: number): Promise<{ store: { readonly parking?: ParkingLot }; freeze(): void; thaw(): void }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function lotOf(store: { readonly parking?: ParkingLot }): ParkingLot {
  if (store.parking === undefined) throw new Error('the store has no parking lot');
  return store.parking;
}

let sequence = 0;

/** A parked delivery with distinct content, overridable. */
export function parkedDelivery(overrides: Partial<ParkedDelivery> = {}): ParkedDelivery {
  sequence++;
  return {
    id: `delivery-${sequence}`,
    webhook: 'board',
    kind: `task.updated.${sequence}`,
    reason: 'failing',
    parkedAt: 1_700_000_000_000 + sequence,
    firstFailedAt: 1_699_900_000_000 + sequence,
    attempts: sequence,
    lastError: `handler failed #${sequence}`,
    headers: { 'x-svc-delivery': `delivery-${sequence}`, 'content-type': 'application/json' },
    body: new TextEncoder().encode(`{"n":${sequence}}`),
    ...overrides,
  };
}

/** The ids no store may confuse with each other or with another key or row. */
export const ODD_IDS = ['x'.repeat(5000), 'a\0b', 'a\0c', 'a\ud800b', 'a\udc00b', 'id:abc', 'abc', '{parked}', 'sha256:0', randomUUID(), 'ÄÖÜ ✓ 😀'];

/**
 * The ParkingLot specification, run against a real server by each store's test file: the same
 * behaviour from Redis, a Redis Cluster and PostgreSQL.
 */
export function describeParkingLot(name: string, harness: ParkingHarness): void {
  const lot = async (options?: LotOptions) => lotOf(await harness.open(options));

  describe(`${name}: failures`, () => {
    it('knows no failure of a delivery that never failed', async () => {
      expect(await (await lot()).failure('never-failed')).toBeUndefined();
    });

    it('keeps the first time, counts the attempts and replaces the last error', async () => {
      const parking = await lot();
      await parking.noteFailure('d', 1_700_000_000_123, 'first error');
      expect(await parking.failure('d')).toEqual({ firstAt: 1_700_000_000_123, attempts: 1, lastError: 'first error' });
      await parking.noteFailure('d', 1_700_000_005_000, 'second error');
      await parking.noteFailure('d', 1_700_000_009_000, 'third: \0 \ud800 ✓');
      expect(await parking.failure('d')).toEqual({ firstAt: 1_700_000_000_123, attempts: 3, lastError: 'third: \0 \ud800 ✓' });
      expect(await parking.failure('other')).toBeUndefined();
    });

    it('counts concurrent failures of one delivery, each once', async () => {
      const parking = await lot();
      await Promise.all(Array.from({ length: 20 }, (_, i) => parking.noteFailure('busy', 1000 + i, `e${i}`)));
      expect((await parking.failure('busy'))?.attempts).toBe(20);
    });

    it("forgets a failure the store's retention after its last attempt, and starts again after", async () => {
      const parking = await lot({ retentionMs: 400 });
      await parking.noteFailure('short', 1000, 'e1');
      await sleep(200);
      await parking.noteFailure('short', 2000, 'e2');
      await sleep(250);
      expect(await parking.failure('short')).toEqual({ firstAt: 1000, attempts: 2, lastError: 'e2' });
      await sleep(300);
      expect(await parking.failure('short')).toBeUndefined();
      await parking.noteFailure('short', 3000, 'e3');
      expect(await parking.failure('short')).toEqual({ firstAt: 3000, attempts: 1, lastError: 'e3' });
    });
  });

  describe(`${name}: parked deliveries`, () => {
    it('gives back what it parked, byte for byte: a body of invalid UTF-8 and one of 256 KiB', async () => {
      const parking = await lot();
      const invalid = parkedDelivery({ body: new Uint8Array([0xff, 0xfe, 0x80, 0x00, 0xc3, 0x28, 0xed, 0xa0, 0x80]) });
      const big = parkedDelivery({ body: new Uint8Array(randomBytes(256 * 1024)), webhook: 'bot', reason: 'schema', firstFailedAt: undefined });
      const replayed = parkedDelivery({ replayedAt: 1_700_000_100_000, headers: {}, kind: '' });
      for (const parked of [invalid, big, replayed]) expect(await parking.park(parked)).toBe(true);
      for (const parked of [invalid, big, replayed]) {
        // The body apart: a deep comparison of 256 KiB element by element takes seconds.
        const { body, ...rest } = (await parking.get(parked.id))!;
        expect(rest).toEqual({ ...parked, body: undefined });
        expect(body).toBeInstanceOf(Uint8Array);
        expect(Buffer.from(body).equals(Buffer.from(parked.body))).toBe(true);
      }
      expect((await parking.get(big.id))?.firstFailedAt).toBeUndefined();
      expect((await parking.get(invalid.id))?.replayedAt).toBeUndefined();
      expect(await parking.get('not-parked')).toBeUndefined();
    });

    it('keeps a body given as a view into a larger buffer as the view only', async () => {
      const parking = await lot();
      const whole = new Uint8Array([9, 9, 1, 2, 3, 9]);
      const parked = parkedDelivery({ body: whole.subarray(2, 5) });
      await parking.park(parked);
      expect([...(await parking.get(parked.id))!.body]).toEqual([1, 2, 3]);
    });

    it('lists the oldest parked first, at most `limit`', async () => {
      const parking = await lot();
      const [a, b, c] = [parkedDelivery({ parkedAt: 3000 }), parkedDelivery({ parkedAt: 1000 }), parkedDelivery({ parkedAt: 2000 })];
      for (const parked of [a, b, c]) await parking.park(parked);
      expect((await parking.list()).map((p) => p.id)).toEqual([b.id, c.id, a.id]);
      expect(await parking.list(2)).toEqual([b, c]);
      expect(await parking.list(0)).toEqual([]);
      expect(await parking.list(10)).toEqual([b, c, a]);
      expect(await (await lot()).list()).toEqual([]);
    });

    it('replaces a parked delivery (after a replay) under its id, in its new place', async () => {
      const parking = await lot();
      const [a, b] = [parkedDelivery({ parkedAt: 1000 }), parkedDelivery({ parkedAt: 2000 })];
      await parking.park(a);
      await parking.park(b);
      const replaced = { ...a, parkedAt: 3000, attempts: a.attempts + 1, replayedAt: 2500, body: new Uint8Array([1]) };
      expect(await parking.park(replaced)).toBe(true);
      expect(await parking.get(a.id)).toEqual(replaced);
      expect(await parking.list()).toEqual([b, replaced]);
    });

    it('parks no more than maxParked: a new one past it is refused and nothing kept; a parked one is still replaced', async () => {
      const parking = await lot({ maxParked: 2 });
      const [a, b, c] = [parkedDelivery(), parkedDelivery(), parkedDelivery()];
      expect(await parking.park(a)).toBe(true);
      expect(await parking.park(b)).toBe(true);
      expect(await parking.park(c)).toBe(false);
      expect(await parking.get(c.id)).toBeUndefined();
      expect(await parking.list()).toEqual([a, b]);
      const replaced = { ...b, attempts: 99 };
      expect(await parking.park(replaced)).toBe(true);
      expect(await parking.list()).toEqual([a, replaced]);
      expect(await parking.drop(a.id)).toBe(true);
      expect(await parking.park(c)).toBe(true);
      expect(await parking.list()).toEqual([replaced, c]);
    });

    it('drops a parked delivery for good: true once, then false', async () => {
      const parking = await lot();
      const [a, b] = [parkedDelivery(), parkedDelivery()];
      await parking.park(a);
      await parking.park(b);
      expect(await parking.drop(a.id)).toBe(true);
      expect(await parking.drop(a.id)).toBe(false);
      expect(await parking.drop('never-parked')).toBe(false);
      expect(await parking.get(a.id)).toBeUndefined();
      expect(await parking.list()).toEqual([b]);
    });

    it('forgets a parked delivery after parkedRetentionMs, which then no longer counts toward maxParked', async () => {
      const parking = await lot({ parkedRetentionMs: 300, maxParked: 1 });
      const [a, b] = [parkedDelivery(), parkedDelivery()];
      await parking.park(a);
      expect(await parking.park(b)).toBe(false);
      expect(await parking.get(a.id)).toEqual(a);
      await sleep(450);
      expect(await parking.get(a.id)).toBeUndefined();
      expect(await parking.list()).toEqual([]);
      expect(await parking.drop(a.id)).toBe(false);
      expect(await parking.park(b)).toBe(true);
      expect(await parking.list()).toEqual([b]);
    });

    it('keeps parked deliveries and failures apart from each other', async () => {
      const parking = await lot();
      const parked = parkedDelivery();
      await parking.park(parked);
      expect(await parking.failure(parked.id)).toBeUndefined();
      await parking.noteFailure(parked.id, 5, 'again');
      expect(await parking.get(parked.id)).toEqual(parked);
      expect(await parking.drop(parked.id)).toBe(true);
      expect(await parking.failure(parked.id)).toEqual({ firstAt: 5, attempts: 1, lastError: 'again' });
    });

    it('keeps ids of any form apart: very long, with a NUL, a lone surrogate, `id:`-like, a UUID', async () => {
      const parking = await lot();
      const parked = ODD_IDS.map((id, i) => parkedDelivery({ id, parkedAt: 1000 + i, body: new Uint8Array([i]) }));
      for (const p of parked) expect(await parking.park(p)).toBe(true);
      for (const [i, id] of ODD_IDS.entries()) await parking.noteFailure(id, i, `error ${i}`);
      for (const [i, p] of parked.entries()) {
        expect(await parking.get(p.id)).toEqual(p);
        expect(await parking.failure(p.id)).toEqual({ firstAt: i, attempts: 1, lastError: `error ${i}` });
      }
      expect((await parking.list()).map((p) => p.id)).toEqual(ODD_IDS);
      expect(await parking.drop('a\0b')).toBe(true);
      expect(await parking.get('a\0c')).toEqual(parked[2]);
      expect(await parking.drop('a\ud800b')).toBe(true);
      expect(await parking.get('a\udc00b')).toEqual(parked[4]);
      expect((await parking.list()).map((p) => p.id)).toEqual(ODD_IDS.filter((id) => id !== 'a\0b' && id !== 'a\ud800b'));
    });
  });

  describe(`${name}: a store that cannot be reached`, () => {
    it('rejects every call within its command timeout', async () => {
      const parking = lotOf(await harness.unreachable(300));
      const calls: Array<() => Promise<unknown>> = [
        async () => parking.noteFailure('d', 1, 'e'),
        async () => parking.failure('d'),
        async () => parking.park(parkedDelivery()),
        async () => parking.list(),
        async () => parking.get('d'),
        async () => parking.drop('d'),
      ];
      for (const call of calls) {
        const started = Date.now();
        await expect(call()).rejects.toThrow();
        expect(Date.now() - started).toBeLessThan(1500);
      }
    });
  });

  const freezable = harness.freezable?.bind(harness);
  if (freezable !== undefined)
    describe(`${name}: a server that stops answering`, () => {
      it('fails fast (rejects within the command timeout) while the server answers nothing, and recovers', async () => {
        const { store, freeze, thaw } = await freezable(300);
        const parking = lotOf(store);
        await parking.noteFailure('warm-up', 1, 'e');
        freeze();
        try {
          for (const call of [async () => parking.failure('warm-up'), async () => parking.park(parkedDelivery()), async () => parking.list()]) {
            const started = Date.now();
            await expect(call()).rejects.toThrow(/did not answer/);
            expect(Date.now() - started).toBeLessThan(1500);
          }
        } finally {
          thaw();
        }
        // A connection the timeout gave up on may take a moment to be replaced.
        let attempts: number | undefined;
        for (let i = 0; i < 50 && attempts === undefined; i++) {
          attempts = await Promise.resolve()
            .then(() => parking.failure('warm-up'))
            .then(
              (f) => f?.attempts,
              () => undefined,
            );
          if (attempts === undefined) await sleep(100);
        }
        expect(attempts).toBe(1);
      });
    });

  describe(`${name}: options`, () => {
    it.each([
      ['parkedRetentionMs', 0],
      ['parkedRetentionMs', -1],
      ['parkedRetentionMs', '7d'],
      ['maxParked', 0],
      ['maxParked', 1.5],
      ['maxParked', Number.NaN],
    ])('refuses %s: %p, naming the option', async (option, value) => {
      await expect(harness.open({ [option]: value } as LotOptions)).rejects.toThrow(new RegExp(`\`${option}\``));
    });
  });
}
