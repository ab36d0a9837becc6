import type { Redis } from 'ioredis';
import { DeadLetters } from '../../../src/inbox/dead-letters';
import { jobIdOf } from '../../../src/inbox/inbox-job';
import { Queue, resetBullmq, type FakeJob } from '../../support/fake-bullmq';

/**
 * The dead-letter set against scripted BullMQ queues: what it asks each queue, how it reads their
 * jobs, and what retry and drop do to a job. BullMQ itself (the failed set, job.retry, job.remove)
 * runs against a real redis-server in test/redis/inbox.test.ts.
 */
jest.mock('bullmq', () => jest.requireActual('../../support/fake-bullmq'));

const queues = Queue.made;

function job(webhook: 'board' | 'bot', deliveryId: string | undefined, change: Partial<FakeJob> = {}): FakeJob {
  const made: FakeJob = {
    id: deliveryId === undefined ? undefined : jobIdOf(deliveryId),
    data: {
      webhook,
      ...(deliveryId === undefined ? {} : { deliveryId }),
      kind: 'task.created',
      receivedAt: 100,
      headers: { 'x-svc-delivery': deliveryId ?? '' },
      body: '{}',
    },
    finishedOn: 1000,
    attemptsMade: 3,
    failedReason: 'boom',
    failed: true,
    isFailed: jest.fn(() => Promise.resolve(made.failed)),
    retry: jest.fn(() => Promise.resolve()),
    remove: jest.fn(() => Promise.resolve()),
    ...change,
  };
  return made;
}

const hdel = jest.fn((..._args: string[]) => Promise.resolve(1));
const connection = { fake: 'redis', hdel } as unknown as Redis;

function deadLetters() {
  resetBullmq();
  hdel.mockClear();
  const letters = new DeadLetters(connection, 'app');
  const [board, bot] = queues as [Queue, Queue];
  return { letters, board, bot };
}

describe('the dead letters of the inbox', () => {
  it("open the board and the bot queue on the given connection and prefix, without updating the queues' metadata", () => {
    const { board, bot } = deadLetters();
    expect(queues.map((q) => [q.name, q.options])).toEqual([
      ['board', { connection, prefix: 'app', skipMetasUpdate: true }],
      ['bot', { connection, prefix: 'app', skipMetasUpdate: true }],
    ]);
    expect([board.name, bot.name]).toEqual(['board', 'bot']);
  });

  describe('list', () => {
    it('lists every failed job of both queues, oldest failure first, a job without a failure time first of all', async () => {
      const { letters, board, bot } = deadLetters();
      board.jobs.push(job('board', 'b30', { finishedOn: 30 }), job('board', 'b10', { finishedOn: 10 }));
      bot.jobs.push(job('bot', 'u20', { finishedOn: 20 }), job('bot', 'u-none', { finishedOn: undefined }));
      expect((await letters.list()).map((l) => l.deliveryId)).toEqual(['u-none', 'b10', 'u20', 'b30']);
      expect(board.getFailed).toHaveBeenCalledWith(0, -1);
      expect(bot.getFailed).toHaveBeenCalledWith(0, -1);
    });

    it('is empty without failed jobs', async () => {
      expect(await deadLetters().letters.list()).toEqual([]);
    });

    it('shows each as its webhook, delivery id, kind, times, attempts, last error, headers and body', async () => {
      const { letters, bot } = deadLetters();
      bot.jobs.push(job('bot', 'u1', { finishedOn: 5000, attemptsMade: 7, failedReason: 'handler threw' }));
      expect(await letters.list()).toStrictEqual([
        {
          webhook: 'bot',
          deliveryId: 'u1',
          kind: 'task.created',
          receivedAt: 100,
          failedAt: 5000,
          attempts: 7,
          lastError: 'handler threw',
          headers: { 'x-svc-delivery': 'u1' },
          body: '{}',
        },
      ]);
    });

    it('reads the delivery id from the job id when the job data lacks it, and an empty error when none was recorded', async () => {
      const { letters, board } = deadLetters();
      board.jobs.push(job('board', undefined, { id: 'd-a%3Ab%25c', failedReason: undefined }));
      const [letter] = await letters.list();
      expect(letter).toMatchObject({ deliveryId: 'a:b%c', lastError: '' });
    });

    it('reads an empty delivery id from a job with neither', async () => {
      const { letters, board } = deadLetters();
      board.jobs.push(job('board', undefined));
      expect((await letters.list())[0]!.deliveryId).toBe('');
    });
  });

  describe('show', () => {
    it("finds a dead letter by delivery id, asking each queue for the delivery's job id", async () => {
      const { letters, board, bot } = deadLetters();
      bot.jobs.push(job('bot', 'a:b', { failedReason: 'x' }));
      expect(await letters.show('a:b')).toMatchObject({ webhook: 'bot', deliveryId: 'a:b', lastError: 'x' });
      expect(board.getJob).toHaveBeenCalledWith('d-a%3Ab');
      expect(bot.getJob).toHaveBeenCalledWith('d-a%3Ab');
    });

    it('answers undefined for an unknown delivery, and for a job that is not failed', async () => {
      const { letters, board } = deadLetters();
      board.jobs.push(job('board', 'waiting', { failed: false }));
      expect(await letters.show('unknown')).toBeUndefined();
      expect(await letters.show('waiting')).toBeUndefined();
    });

    it('looks in the next queue when a job of that id in the first is not failed', async () => {
      const { letters, board, bot } = deadLetters();
      board.jobs.push(job('board', 'x', { failed: false }));
      bot.jobs.push(job('bot', 'x'));
      expect((await letters.show('x'))?.webhook).toBe('bot');
    });
  });

  describe('retry', () => {
    it('puts a dead letter back with its attempts reset, and answers true', async () => {
      const { letters, board } = deadLetters();
      const dead = job('board', 'd1');
      board.jobs.push(dead);
      expect(await letters.retry('d1')).toBe(true);
      expect(dead.retry).toHaveBeenCalledTimes(1);
      expect(dead.retry).toHaveBeenCalledWith('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    });

    it('resets the count of its stalls first (BullMQ keeps it across a retry), in its own queue', async () => {
      const { letters, bot } = deadLetters();
      const dead = job('bot', 'u1');
      bot.jobs.push(dead);
      dead.retry.mockImplementation(() => {
        expect(hdel).toHaveBeenCalledTimes(1);
        return Promise.resolve();
      });
      expect(await letters.retry('u1')).toBe(true);
      expect(hdel).toHaveBeenCalledWith(`app:bot:${jobIdOf('u1')}`, 'stc');
      expect(dead.retry).toHaveBeenCalledTimes(1);
    });

    it('answers false, retrying nothing, for an unknown delivery or a job that is not failed', async () => {
      const { letters, board } = deadLetters();
      const waiting = job('board', 'w', { failed: false });
      board.jobs.push(waiting);
      expect(await letters.retry('unknown')).toBe(false);
      expect(await letters.retry('w')).toBe(false);
      expect(waiting.retry).not.toHaveBeenCalled();
    });

    it('retries every dead letter and counts those put back, not one that stopped being failed meanwhile', async () => {
      const { letters, board, bot } = deadLetters();
      const a = job('board', 'a');
      const gone = job('board', 'gone');
      const b = job('bot', 'b');
      gone.isFailed.mockResolvedValue(false);
      board.jobs.push(a, gone);
      bot.jobs.push(b);
      expect(await letters.retryAll()).toBe(2);
      expect([a.retry.mock.calls.length, gone.retry.mock.calls.length, b.retry.mock.calls.length]).toEqual([1, 0, 1]);
    });

    it('counts none without dead letters', async () => {
      expect(await deadLetters().letters.retryAll()).toBe(0);
    });
  });

  describe('drop', () => {
    it('deletes a dead letter for good, and answers true', async () => {
      const { letters, bot } = deadLetters();
      const dead = job('bot', 'd1');
      bot.jobs.push(dead);
      expect(await letters.drop('d1')).toBe(true);
      expect(dead.remove).toHaveBeenCalledTimes(1);
    });

    it('answers false, deleting nothing, for an unknown delivery or a job that is not failed', async () => {
      const { letters, bot } = deadLetters();
      const waiting = job('bot', 'w', { failed: false });
      bot.jobs.push(waiting);
      expect(await letters.drop('unknown')).toBe(false);
      expect(await letters.drop('w')).toBe(false);
      expect(waiting.remove).not.toHaveBeenCalled();
    });
  });

  it("closes both queues (the connection is its owner's)", async () => {
    const { letters, board, bot } = deadLetters();
    await letters.close();
    expect([board.close.mock.calls.length, bot.close.mock.calls.length]).toEqual([1, 1]);
  });
});
