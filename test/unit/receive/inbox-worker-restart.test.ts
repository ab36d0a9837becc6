import { resetBullmq, Worker } from '../../support/fake-bullmq';
import { deferred } from '../../support/deferred';
import { boardJobData, boardWorker, fakeJob } from './inbox-worker-harness';

/**
 * The watchdog inside a running inbox worker: a BullMQ worker that takes no job while deliveries
 * wait (a connection wedged after a Redis failover) is replaced by a new one; a worker whose
 * handlers run, or that took a job lately, is left alone.
 */

jest.mock('bullmq', () => jest.requireActual('../../support/fake-bullmq'));

jest.mock('../../../src/inbox/redis-connection', () => ({
  ...jest.requireActual('../../../src/inbox/redis-connection'),
  inboxConnection: jest.fn(),
}));

beforeEach(() => {
  resetBullmq();
  jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
});

afterEach(() => {
  jest.useRealTimers();
  jest.restoreAllMocks();
});

/** A worker that looks every second, over a queue where `waiting` jobs wait. */
function watchedWorker(handler: () => unknown = () => undefined, waiting = 3) {
  const made = boardWorker({ handler, work: { stalledIntervalMs: 1000 } });
  made.queue.getWaitingCount.mockResolvedValue(waiting);
  return made;
}

describe('an inbox worker that takes no job while deliveries wait', () => {
  it('gets a new BullMQ worker after two idle looks, not sooner, and the wedged one is closed without waiting for its jobs', async () => {
    const { worker, handle } = watchedWorker();
    // The first look comes a look's time after the start: not yet idle for longer.
    await jest.advanceTimersByTimeAsync(2000);
    expect(Worker.made).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1000);
    expect(Worker.made).toHaveLength(2);
    expect(worker.close).toHaveBeenCalledWith(true);
    await handle.close();
  });

  it('runs the deliveries through the new worker, which close() then closes', async () => {
    const handler = jest.fn();
    const { handle } = watchedWorker(handler);
    await jest.advanceTimersByTimeAsync(3000);
    const renewed = Worker.made.at(-1)!;
    await renewed.processor(fakeJob(boardJobData({ board: undefined })), 'lock-token');
    expect(handler).toHaveBeenCalledTimes(1);
    await handle.close();
    expect(renewed.close).toHaveBeenCalledTimes(1);
    expect(renewed.close).toHaveBeenCalledWith();
  });

  it('counts from the new worker: the next one comes only after two more idle looks', async () => {
    const { handle } = watchedWorker();
    await jest.advanceTimersByTimeAsync(3000);
    await jest.advanceTimersByTimeAsync(2000);
    expect(Worker.made).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1000);
    expect(Worker.made).toHaveLength(3);
    await handle.close();
  });
});

describe('an inbox worker left as it is', () => {
  it('keeps its BullMQ worker while a handler runs, however long no other job is taken', async () => {
    const running = deferred();
    const { worker, handle } = watchedWorker(() => running.promise);
    const job = worker.processor(fakeJob(boardJobData({ board: undefined })), 'lock-token');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(Worker.made).toHaveLength(1);
    running.resolve();
    await job;
    await handle.close();
  });

  it('keeps its BullMQ worker when no delivery waits', async () => {
    const { handle } = watchedWorker(undefined, 0);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(Worker.made).toHaveLength(1);
    await handle.close();
  });
});
