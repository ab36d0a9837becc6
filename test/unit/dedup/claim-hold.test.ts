import { holdClaim } from '../../../src/dedup/claim';
import type { DeliveryStore } from '../../../src';
import { silentLogger } from '../../support/apps';

/** A store that records when the claim was renewed and released, on jest's fake clock. */
function recordingStore(withExtend = true) {
  const renewedAt: number[] = [];
  const releasedAt: number[] = [];
  const store: DeliveryStore = {
    claim: () => ({ state: 'claimed', token: 't' }),
    commit: () => undefined,
    release: () => void releasedAt.push(Date.now()),
    ...(withExtend ? { extend: (_id: string, _token: string, leaseMs: number) => void renewedAt.push(Date.now() + leaseMs) } : {}),
  };
  return { store, renewedAt, releasedAt };
}

describe('holding the claim of handlers that outlived their deadline', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('renews the lease at once and then every third of it, so it never lapses under a running handler', async () => {
    const { store, renewedAt } = recordingStore();
    const hold = holdClaim({ store, id: 'id', token: 't', logger: silentLogger }, { leaseMs: 300, abandonAfterMs: 60_000, onAbandon: () => undefined });
    await jest.advanceTimersByTimeAsync(1000);
    // Renewed at 0, 100, ..., 1000: each renewal lands well before the previous lease (300 ms) ends.
    expect(renewedAt).toEqual([300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300]);
    hold.stop();
  });

  it('stops renewing when stopped: the timer does not outlive the handlers', async () => {
    const { store, renewedAt } = recordingStore();
    const hold = holdClaim({ store, id: 'id', token: 't', logger: silentLogger }, { leaseMs: 300, abandonAfterMs: 60_000, onAbandon: () => undefined });
    await jest.advanceTimersByTimeAsync(150);
    hold.stop();
    const count = renewedAt.length;
    await jest.advanceTimersByTimeAsync(120_000);
    expect(renewedAt).toHaveLength(count);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('abandons the run at abandonAfterMs: renewal stops, the claim is released, onAbandon told once', async () => {
    const { store, renewedAt, releasedAt } = recordingStore();
    const onAbandon = jest.fn();
    holdClaim({ store, id: 'id', token: 't', logger: silentLogger }, { leaseMs: 300, abandonAfterMs: 1000, onAbandon });
    await jest.advanceTimersByTimeAsync(999);
    expect(onAbandon).not.toHaveBeenCalled();
    expect(releasedAt).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(onAbandon).toHaveBeenCalledTimes(1);
    expect(releasedAt).toEqual([1000]);
    const count = renewedAt.length;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(renewedAt).toHaveLength(count);
    expect(onAbandon).toHaveBeenCalledTimes(1);
  });

  it('a store without extend keeps its first lease, and the run is still abandoned in time', async () => {
    const { store, releasedAt } = recordingStore(false);
    const onAbandon = jest.fn();
    holdClaim({ store, id: 'id', token: 't', logger: silentLogger }, { leaseMs: 300, abandonAfterMs: 500, onAbandon });
    await jest.advanceTimersByTimeAsync(500);
    expect(onAbandon).toHaveBeenCalledTimes(1);
    expect(releasedAt).toEqual([500]);
  });

  it('a renewal that fails is logged and the next one still comes', async () => {
    let calls = 0;
    const warn = jest.fn();
    const store: DeliveryStore = {
      claim: () => ({ state: 'busy' }),
      commit: () => undefined,
      release: () => undefined,
      extend: () => {
        calls++;
        if (calls === 1) throw new Error('store blinked');
      },
    };
    const hold = holdClaim({ store, id: 'id', token: 't', logger: { warn } as never }, { leaseMs: 300, abandonAfterMs: 60_000, onAbandon: () => undefined });
    await jest.advanceTimersByTimeAsync(100);
    expect(calls).toBe(2);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ deliveryId: 'id', err: expect.objectContaining({ message: 'store blinked' }) }),
      expect.any(String),
    );
    hold.stop();
  });

  it('a store without extend is never asked to renew: nothing fails, nothing is logged', async () => {
    const { store } = recordingStore(false);
    const warn = jest.fn();
    const hold = holdClaim(
      { store, id: 'id', token: 't', logger: { warn, error: jest.fn() } as never },
      { leaseMs: 300, abandonAfterMs: 60_000, onAbandon: () => undefined },
    );
    await jest.advanceTimersByTimeAsync(1000);
    expect(warn).not.toHaveBeenCalled();
    hold.stop();
  });
});

describe('the timers that hold a claim', () => {
  const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

  it('never keep the process alive: a receiver can exit while a hung handler holds its claim', () => {
    const { store } = recordingStore();
    const before = refTimers();
    const hold = holdClaim({ store, id: 'id', token: 't', logger: silentLogger }, { leaseMs: 300, abandonAfterMs: 60_000, onAbandon: () => undefined });
    expect(refTimers()).toBe(before);
    hold.stop();
  });
});
