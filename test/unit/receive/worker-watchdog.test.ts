import { IDLE_LOOKS, watchWorker } from '../../../src/receive/worker-watchdog';
import { deferred, memoryLogger } from '../../support/apps';

/** A worker as the watchdog sees it: whether it is busy, when it last took a job, how many jobs wait. */
function watched({ busy = false, waiting = 3, restartFails = false, count = (n: number) => Promise.resolve(n) } = {}) {
  const state = { busy, waiting, lastTaken: Date.now(), restarts: 0, counts: 0 };
  const log = memoryLogger();
  const dog = watchWorker({
    everyMs: 1000,
    busy: () => state.busy,
    lastTaken: () => state.lastTaken,
    waiting: () => {
      state.counts++;
      return count(state.waiting);
    },
    restart: async () => {
      state.restarts++;
      if (restartFails) throw Object.assign(new Error('redis down'), { code: 'E_DOWN' });
    },
    logger: log.logger,
  });
  return { state, log, dog };
}

describe('the inbox worker watchdog', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it(`restarts a worker that took no job for ${IDLE_LOOKS} looks while jobs wait, and says so at warn`, async () => {
    const { state, log, dog } = watched();
    // The first look finds it a look's time since it started: not yet idle for longer.
    await jest.advanceTimersByTimeAsync(2000);
    expect(state.restarts).toBe(0);
    await jest.advanceTimersByTimeAsync(1000);
    expect(state.restarts).toBe(1);
    expect(log.lines.filter((l) => l.level === 40)).toEqual([expect.objectContaining({ waiting: 3 })]);
    dog.stop();
  });

  it('says at warn how long the worker has taken no job', async () => {
    const { log, dog } = watched();
    await jest.advanceTimersByTimeAsync(3000);
    expect(log.lines.filter((l) => l.level === 40)).toEqual([expect.objectContaining({ waiting: 3, idleMs: 3000 })]);
    dog.stop();
  });

  it('leaves alone a worker whose queue is empty, one that is running handlers, and one that took a job lately', async () => {
    for (const [change, tick] of [
      [{ waiting: 0 }, () => undefined],
      [{ busy: true }, () => undefined],
    ] as const) {
      const { state, dog } = watched(change);
      tick();
      await jest.advanceTimersByTimeAsync(10_000);
      expect(state.restarts).toBe(0);
      dog.stop();
    }
    const { state, dog } = watched();
    for (let i = 0; i < 10; i++) {
      state.lastTaken = Date.now();
      await jest.advanceTimersByTimeAsync(1000);
    }
    expect(state.restarts).toBe(0);
    dog.stop();
  });

  it('counts its looks again after one that found the worker well', async () => {
    const { state, dog } = watched();
    await jest.advanceTimersByTimeAsync(2000);
    state.waiting = 0;
    await jest.advanceTimersByTimeAsync(1000);
    state.waiting = 2;
    await jest.advanceTimersByTimeAsync(1000);
    expect(state.restarts).toBe(0);
    await jest.advanceTimersByTimeAsync(1000);
    expect(state.restarts).toBe(1);
    dog.stop();
  });

  it('logs a restart that fails at error, and tries again later', async () => {
    const { state, log, dog } = watched({ restartFails: true });
    await jest.advanceTimersByTimeAsync(5000);
    expect(state.restarts).toBe(2);
    expect(log.lines.filter((l) => l.level === 50)).toHaveLength(2);
    dog.stop();
  });

  it('logs the error of a failed restart with its code', async () => {
    const { log, dog } = watched({ restartFails: true });
    await jest.advanceTimersByTimeAsync(3000);
    expect(log.lines.filter((l) => l.level === 50)).toEqual([expect.objectContaining({ err: expect.objectContaining({ code: 'E_DOWN' }) })]);
    dog.stop();
  });

  it('asks the queue for its count once at a time: a look while the last count is still awaited is skipped', async () => {
    const answer = deferred<number>();
    const { state, dog } = watched({ count: () => answer.promise });
    // The look at 2 s asks; the queue answers only after the looks at 3 s and 4 s.
    await jest.advanceTimersByTimeAsync(4000);
    expect(state.counts).toBe(1);
    answer.resolve(3);
    await jest.advanceTimersByTimeAsync(1000);
    // The skipped looks counted nothing: this is the second idle look, not the fourth.
    expect(state.counts).toBe(2);
    expect(state.restarts).toBe(1);
    dog.stop();
  });

  it('looks no more once stopped', async () => {
    const { state, dog } = watched();
    dog.stop();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(state.restarts).toBe(0);
  });
});
