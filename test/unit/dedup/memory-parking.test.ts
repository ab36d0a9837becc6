import { memoryStore } from '../../../src';
import { MemoryParkingLot } from '../../../src/dedup/memory-store';
import type { ParkedDelivery } from '../../../src/dedup/parking-lot';

const DAY = 24 * 3_600_000;

function lot(terms: Partial<ConstructorParameters<typeof MemoryParkingLot>[0]> = {}) {
  const clock = { now: 1_000_000 };
  const parking = new MemoryParkingLot({ failureRetentionMs: DAY, parkedRetentionMs: 7 * DAY, maxParked: 3, maxFailures: 100, now: () => clock.now, ...terms });
  return { clock, parking };
}

function parked(id: string, parkedAt: number, extra: Partial<ParkedDelivery> = {}): ParkedDelivery {
  return {
    id,
    webhook: 'board',
    kind: 'task.created',
    reason: 'failing',
    parkedAt,
    attempts: 1,
    lastError: 'x',
    headers: {},
    body: new Uint8Array([0xff, 0x00, 0x7b]),
    ...extra,
  };
}

describe('the memory parking lot', () => {
  describe('failures', () => {
    it('keeps the first time, counts attempts and replaces the last error', () => {
      const { parking } = lot();
      expect(parking.failure('a')).toBeUndefined();
      parking.noteFailure('a', 500, 'first');
      parking.noteFailure('a', 900, 'second');
      // An attempt noted late with an earlier time (out of order) moves the first time back.
      parking.noteFailure('a', 400, 'third');
      expect(parking.failure('a')).toEqual({ firstAt: 400, attempts: 3, lastError: 'third' });
      expect(parking.failure('b')).toBeUndefined();
    });

    it('forgets a failure after the failure retention, counted from its last note', () => {
      const { clock, parking } = lot();
      parking.noteFailure('a', 1, 'e');
      clock.now += DAY - 1;
      parking.noteFailure('a', 2, 'e');
      clock.now += DAY - 1;
      expect(parking.failure('a')).toMatchObject({ attempts: 2 });
      clock.now += 1;
      expect(parking.failure('a')).toBeUndefined();
    });

    it('forgets the oldest noted failures first past maxFailures', () => {
      const { parking } = lot({ maxFailures: 2 });
      parking.noteFailure('a', 1, 'e');
      parking.noteFailure('b', 1, 'e');
      parking.noteFailure('a', 2, 'e'); // noted again: now the newest
      parking.noteFailure('c', 1, 'e');
      expect([parking.failure('a'), parking.failure('b'), parking.failure('c')].map((f) => f?.attempts)).toEqual([2, undefined, 1]);
    });
  });

  describe('parked deliveries', () => {
    it('gives back what was parked, byte for byte, lists oldest parked first and honours the limit', () => {
      const { parking } = lot();
      expect(parking.park(parked('b', 20))).toBe(true);
      expect(parking.park(parked('a', 10))).toBe(true);
      expect(parking.get('b')!.body).toEqual(new Uint8Array([0xff, 0x00, 0x7b]));
      expect(parking.list().map((p) => p.id)).toEqual(['a', 'b']);
      expect(parking.list(1).map((p) => p.id)).toEqual(['a']);
      expect(parking.list(0)).toEqual([]);
    });

    it('refuses a new one past maxParked, keeping nothing; replacing a parked one still succeeds', () => {
      const { parking } = lot({ maxParked: 2 });
      parking.park(parked('a', 1));
      parking.park(parked('b', 2));
      expect(parking.park(parked('c', 3))).toBe(false);
      expect(parking.get('c')).toBeUndefined();
      expect(parking.park(parked('a', 1, { attempts: 9 }))).toBe(true);
      expect(parking.get('a')!.attempts).toBe(9);
      expect(parking.list()).toHaveLength(2);
    });

    it('forgets a parked delivery after parkedRetentionMs, which frees its place', () => {
      const { clock, parking } = lot({ maxParked: 1, parkedRetentionMs: 1000 });
      parking.park(parked('a', 1));
      clock.now += 999;
      expect(parking.get('a')).toBeDefined();
      expect(parking.park(parked('b', 2))).toBe(false);
      clock.now += 1;
      const again = lot({ maxParked: 1, parkedRetentionMs: 1000 });
      again.parking.park(parked('x', 1));
      again.clock.now += 1000;
      expect(again.parking.park(parked('y', 2))).toBe(true);
      // Neither asked for by id first: listing and parking sweep what expired themselves.
      expect(parking.list()).toEqual([]);
      expect(parking.park(parked('b', 2))).toBe(true);
      expect(parking.get('a')).toBeUndefined();
    });

    it('drops one for good, answering whether there was one', () => {
      const { clock, parking } = lot({ parkedRetentionMs: 1000 });
      parking.park(parked('a', 1));
      parking.park(parked('b', 1));
      expect(parking.drop('a')).toBe(true);
      expect(parking.drop('a')).toBe(false);
      expect(parking.get('a')).toBeUndefined();
      clock.now += 1000;
      expect(parking.drop('b')).toBe(false);
    });
  });

  it("is the memory store's own, on its clock and with its options", () => {
    const clock = { now: 0 };
    const store = memoryStore({ now: () => clock.now, maxParked: 1, parkedRetentionMs: 50, retentionMs: 100 });
    store.parking.noteFailure('a', 0, 'e');
    expect(store.parking.park(parked('a', 0))).toBe(true);
    expect(store.parking.park(parked('b', 0))).toBe(false);
    clock.now = 50;
    expect(store.parking.get('a')).toBeUndefined();
    expect(store.parking.failure('a')).toBeDefined();
    clock.now = 100;
    expect(store.parking.failure('a')).toBeUndefined();
    expect(() => memoryStore({ maxParked: 0 })).toThrow(/`maxParked` must be an integer/);
    expect(() => memoryStore({ parkedRetentionMs: -1 })).toThrow(/`parkedRetentionMs` must be/);
  });
});
