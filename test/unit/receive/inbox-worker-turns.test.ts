import type { InboxJob } from '../../../src/inbox/inbox-job';
import { resetBullmq, DelayedError } from '../../support/fake-bullmq';
import { boardJobData, boardWorker, fakeJob, flush, NOW } from './inbox-worker-harness';

/**
 * Which events of a board wait for their turn and what the worker says about them: the wait for
 * numbers that have not arrived, and the events that carry no board and so stand outside the order.
 */

jest.mock('bullmq', () => jest.requireActual('../../support/fake-bullmq'));

jest.mock('../../../src/inbox/redis-connection', () => ({
  ...jest.requireActual('../../../src/inbox/redis-connection'),
  inboxConnection: jest.fn(),
}));

const at = (lines: Array<Record<string, any>>, level: number) => lines.filter((l) => l.level === level);

beforeEach(() => {
  resetBullmq();
  jest.spyOn(Date, 'now').mockReturnValue(NOW);
});

afterEach(async () => {
  await flush();
  jest.restoreAllMocks();
});

describe('an ordered event that starts waiting for numbers that have not arrived', () => {
  it('says so at info, with its board, sequence, the numbers it waits for and how long, and goes back to the delayed set', async () => {
    const handler = jest.fn();
    const { process, conn, lines } = boardWorker({ handler });
    // Event 7 of board B1: 4 to 6 are missing; it waits up to 45 s for them.
    conn.answers.start.push([0, 45_000, 4], [0, 0]);
    const data = boardJobData();
    const job = fakeJob(data);
    await expect(process(job)).rejects.toBeInstanceOf(DelayedError);
    expect(job.moveToDelayed).toHaveBeenCalledWith(NOW + 45_000, 'lock-token');
    expect(handler).not.toHaveBeenCalled();
    expect(at(lines(), 30)).toEqual([
      expect.objectContaining({ board: 'B1', deliveryId: data.deliveryId, sequence: 7, missing: { from: 4, to: 6 }, waitMs: 45_000 }),
    ]);
  });

  it('says nothing when it waits again for numbers it was told of already', async () => {
    const { process, conn, lines } = boardWorker();
    conn.answers.start.push([0, 30_000], [0, 0]);
    await expect(process(fakeJob(boardJobData()))).rejects.toBeInstanceOf(DelayedError);
    expect(lines()).toEqual([]);
  });
});

describe('an event of an ordered kind that names no board', () => {
  const noBoard = (): InboxJob => boardJobData({ board: undefined });

  it('runs outside the board order: nothing about the board order is logged, only the processed line', async () => {
    const handler = jest.fn();
    const { process, lines, records } = boardWorker({ handler });
    await expect(process(fakeJob(noBoard()))).resolves.toBeUndefined();
    expect(handler).toHaveBeenCalledTimes(1);
    expect(lines().map((l) => [l.level, l.queue])).toEqual([[30, 'processed']]);
    expect(records.map((r) => r.queue)).toEqual(['processed']);
  });

  it('is kept as a dead letter, told to the listeners, when BullMQ fails it itself', async () => {
    const { worker, conn, lines, records } = boardWorker();
    const job = { ...fakeJob(noBoard(), { attemptsMade: 3 }), finishedOn: NOW };
    worker.emit('failed', job, Object.assign(new Error('job stalled more than allowable limit'), { code: 'E_STALLED' }));
    await flush();
    expect(conn.calls).toEqual([]);
    expect(at(lines(), 50)).toEqual([expect.objectContaining({ deliveryId: job.data.deliveryId, queue: 'dead', attempt: 3 })]);
    expect(records).toEqual([expect.objectContaining({ deliveryId: job.data.deliveryId, queue: 'dead', code: 'handler_failed', status: 500 })]);
  });
});
