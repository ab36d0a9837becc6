import { SvcWebhookError } from '../../../src/errors';
import type { InboxJob } from '../../../src/inbox/inbox-job';
import type { InboxSettings } from '../../../src/inbox/inbox-options';
import { InboxProducer, jobOptions } from '../../../src/inbox/inbox-producer';
import { inboxConnection } from '../../../src/inbox/redis-connection';
import type { JobSource } from '../../../src/inbox/accepted-delivery';
import type { Delivery } from '../../../src/internal/delivery/delivery';
import { Queue, resetBullmq, script } from '../../support/fake-bullmq';

/**
 * The receiving side of the inbox against a scripted BullMQ queue and connection: the job and job
 * options it adds, its enqueue timeout, the 503 it refuses with, and what it opens and closes.
 * BullMQ and Redis themselves are tested in test/redis/inbox.test.ts.
 */
jest.mock('bullmq', () => jest.requireActual('../../support/fake-bullmq'));

const queues = Queue.made;

type FakeConnection = { role: string; quit: jest.Mock; disconnect: jest.Mock; isCluster?: true; pipeline?: () => unknown };
const connections: FakeConnection[] = [];
// On a cluster: what the pipeline after an add sent, and how WAIT answers it.
const waits: unknown[][] = [];
let wait: () => Promise<[Error | null, unknown]> = () => Promise.resolve([null, 1]);

jest.mock('../../../src/inbox/redis-connection', () => ({
  ...jest.requireActual('../../../src/inbox/redis-connection'),
  inboxConnection: jest.fn((connection: unknown, role: string) => {
    const made: FakeConnection = { role, quit: jest.fn(() => Promise.resolve('OK')), disconnect: jest.fn() };
    if (typeof connection !== 'string') {
      made.isCluster = true;
      made.pipeline = () => {
        const sent: unknown[] = [];
        const pipeline = {
          exists: (key: string) => (sent.push('EXISTS', key), pipeline),
          call: (...args: unknown[]) => (sent.push(...args), pipeline),
          exec: async () => {
            waits.push(sent);
            return [[null, 1], await wait()];
          },
        };
        return pipeline;
      };
    }
    connections.push(made);
    return made;
  }),
}));

// Settings as inboxSettings() makes them (written out: a mutant of inboxSettings must not stop this file from loading).
const settings: InboxSettings = {
  connection: 'redis://inbox:6379/2',
  prefix: 'app',
  retryForMs: 86_400_000,
  retryDelayMs: 1000,
  maxRetryDelayMs: 3_600_000,
  attempts: 41,
  ordered: false,
  gapWaitMs: 120_000,
  keepProcessedMs: 1500,
  enqueueTimeoutMs: 300,
};

const made: InboxJob = { webhook: 'board', deliveryId: 'a:1', kind: 'task.created', body: '{}', headers: {}, receivedAt: 42 };
const jobs: JobSource<Delivery> = { jobOf: jest.fn(() => made) };
const delivery = { id: 'a:1', kind: 'task.created' } as unknown as Delivery;
const body = Buffer.from('{}');
const req = { headers: {} };

const never = () => new Promise<never>(() => undefined);

beforeEach(() => {
  resetBullmq();
  connections.length = 0;
  waits.length = 0;
  wait = () => Promise.resolve([null, 1]);
  jest.clearAllMocks();
});

afterEach(() => {
  jest.useRealTimers();
});

describe('the BullMQ options of an inbox job', () => {
  it("name the job by the delivery id, allow the retry window's attempts with the inbox backoff, keep processed jobs for keepProcessedFor (in seconds, rounded up) and dead letters until dropped", () => {
    expect(jobOptions(settings, 'a:1')).toStrictEqual({
      jobId: 'd-a%3A1',
      attempts: 41,
      backoff: { type: 'inbox' },
      removeOnComplete: { age: 2 },
      removeOnFail: false,
    });
    expect(jobOptions({ ...settings, keepProcessedMs: 3000 }, 'x').removeOnComplete).toEqual({ age: 3 });
    expect(jobOptions({ ...settings, attempts: 17 }, 'x').attempts).toBe(17);
  });
});

describe('the inbox producer', () => {
  it("adds the delivery's job to its webhook's queue, named by kind, with the job options", async () => {
    const producer = new InboxProducer(settings, 'board', jobs);
    await expect(producer.handoff({ delivery, body, request: req, receivedAt: 42 })).resolves.toBeUndefined();
    expect(jobs.jobOf).toHaveBeenCalledWith({ delivery, body, request: req, receivedAt: 42 });
    expect(queues).toHaveLength(1);
    expect(queues[0]!.add).toHaveBeenCalledTimes(1);
    const [name, job, options] = queues[0]!.add.mock.calls[0]!;
    expect(name).toBe('task.created');
    expect(job).toStrictEqual(made);
    expect(options).toStrictEqual(jobOptions(settings, 'a:1'));
  });

  it("keeps the receive span's context in the job when there is one", async () => {
    const producer = new InboxProducer(settings, 'board', jobs);
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    await producer.handoff({ delivery, body, request: req, receivedAt: 42, trace: trace });
    expect(queues[0]!.add.mock.calls[0]![1]).toStrictEqual({ ...made, trace });
  });

  it('opens one queue for its webhook on the first delivery, on a producer connection to the inbox URL, under the prefix, and ignores its error events', async () => {
    const producer = new InboxProducer(settings, 'bot', jobs);
    expect(queues).toHaveLength(0);
    await producer.handoff({ delivery, body, request: req, receivedAt: 1 });
    await producer.handoff({ delivery, body, request: req, receivedAt: 2 });
    expect(inboxConnection).toHaveBeenCalledTimes(1);
    expect(inboxConnection).toHaveBeenCalledWith('redis://inbox:6379/2', 'producer');
    expect(queues.map((q) => [q.name, q.options])).toEqual([['bot', { connection: connections[0], prefix: 'app' }]]);
    expect(queues[0]!.add).toHaveBeenCalledTimes(2);
    expect(queues[0]!.on).toHaveBeenCalledTimes(1);
    const [event, listener] = queues[0]!.on.mock.calls[0]! as [string, (err: Error) => unknown];
    expect(event).toBe('error');
    expect(listener(new Error('down'))).toBeUndefined();
  });

  it('leaves no timer behind once the job is taken', async () => {
    jest.useFakeTimers();
    await new InboxProducer(settings, 'board', jobs).handoff({ delivery, body, request: req, receivedAt: 42 });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('refuses the delivery with 503 inbox_unavailable, retry after 5 s, when Redis fails to take the job', async () => {
    const down = new Error('connection is closed');
    script.add = () => Promise.reject(down);
    const refused = await new InboxProducer(settings, 'board', jobs).handoff({ delivery, body, request: req, receivedAt: 42 }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(SvcWebhookError);
    expect(refused).toMatchObject({ code: 'inbox_unavailable', status: 503, retryAfter: 5, cause: down });
  });

  it('refuses the delivery with 503 inbox_unavailable once Redis has not taken it within enqueueTimeoutMs', async () => {
    jest.useFakeTimers();
    script.add = never;
    let outcome: unknown = 'pending';
    void new InboxProducer(settings, 'board', jobs).handoff({ delivery, body, request: req, receivedAt: 42 }).then(
      () => (outcome = 'taken'),
      (err: unknown) => (outcome = err),
    );
    await jest.advanceTimersByTimeAsync(299);
    expect(outcome).toBe('pending');
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome).toBeInstanceOf(SvcWebhookError);
    expect(outcome).toMatchObject({ code: 'inbox_unavailable', status: 503, retryAfter: 5 });
    expect((outcome as Error).cause).toBeInstanceOf(Error);
  });

  describe('on a Redis Cluster', () => {
    const onCluster: InboxSettings = { ...settings, connection: { cluster: ['redis://a:7000'], waitForReplicas: 1 }, prefix: '{app}' };

    it("answers once the job is added and a replica of the queue's master holds it (WAIT on that connection, within the enqueue timeout)", async () => {
      await expect(new InboxProducer(onCluster, 'board', jobs).handoff({ delivery, body, request: req, receivedAt: 42 })).resolves.toBeUndefined();
      expect(queues[0]!.add).toHaveBeenCalledTimes(1);
      expect(waits).toHaveLength(1);
      const [exists, key, command, replicas, timeoutMs] = waits[0]!;
      expect([exists, key, command, replicas]).toEqual(['EXISTS', '{app}:board:id', 'WAIT', 1]);
      expect(timeoutMs).toBeGreaterThan(200);
      expect(timeoutMs).toBeLessThanOrEqual(300);
    });

    it('refuses the delivery with 503 inbox_unavailable when no replica acknowledged it in time', async () => {
      wait = () => Promise.resolve([null, 0]);
      const refused = await new InboxProducer(onCluster, 'board', jobs).handoff({ delivery, body, request: req, receivedAt: 42 }).catch((err: unknown) => err);
      expect(refused).toMatchObject({ code: 'inbox_unavailable', status: 503, retryAfter: 5 });
    });

    it('refuses the delivery with 503 once the enqueue timeout passes while WAIT has not answered', async () => {
      jest.useFakeTimers();
      wait = never;
      let outcome: unknown = 'pending';
      void new InboxProducer(onCluster, 'board', jobs).handoff({ delivery, body, request: req, receivedAt: 42 }).then(
        () => (outcome = 'taken'),
        (err: unknown) => (outcome = err),
      );
      await jest.advanceTimersByTimeAsync(300);
      expect(outcome).toMatchObject({ code: 'inbox_unavailable', status: 503 });
    });

    it('does not wait with waitForReplicas 0', async () => {
      await new InboxProducer({ ...onCluster, connection: { cluster: ['redis://a:7000'], waitForReplicas: 0 } }, 'board', jobs).handoff({
        delivery,
        body,
        request: req,
        receivedAt: 42,
      });
      expect(waits).toHaveLength(0);
    });

    it('does not wait on a single Redis', async () => {
      await new InboxProducer(settings, 'board', jobs).handoff({ delivery, body, request: req, receivedAt: 42 });
      expect(waits).toHaveLength(0);
    });
  });

  describe('close', () => {
    it('does nothing before the first delivery', async () => {
      await expect(new InboxProducer(settings, 'board', jobs).close()).resolves.toBeUndefined();
      expect(queues).toHaveLength(0);
      expect(connections).toHaveLength(0);
    });

    it('closes the queue and quits its connection, once', async () => {
      const producer = new InboxProducer(settings, 'board', jobs);
      await producer.handoff({ delivery, body, request: req, receivedAt: 42 });
      await producer.close();
      await producer.close();
      expect(queues[0]!.close).toHaveBeenCalledTimes(1);
      expect(connections[0]!.quit).toHaveBeenCalledTimes(1);
      expect(connections[0]!.disconnect).not.toHaveBeenCalled();
    });

    it('quits the connection even when closing the queue fails, and disconnects it when quitting fails', async () => {
      const producer = new InboxProducer(settings, 'board', jobs);
      await producer.handoff({ delivery, body, request: req, receivedAt: 42 });
      queues[0]!.close.mockRejectedValue(new Error('closed'));
      connections[0]!.quit.mockRejectedValue(new Error('closed'));
      await expect(producer.close()).resolves.toBeUndefined();
      expect(connections[0]!.quit).toHaveBeenCalledTimes(1);
      expect(connections[0]!.disconnect).toHaveBeenCalledTimes(1);
    });

    it('opens a new queue and connection for a delivery after it', async () => {
      const producer = new InboxProducer(settings, 'board', jobs);
      await producer.handoff({ delivery, body, request: req, receivedAt: 42 });
      await producer.close();
      await producer.handoff({ delivery, body, request: req, receivedAt: 43 });
      expect(queues).toHaveLength(2);
      expect(connections).toHaveLength(2);
      expect(queues[1]!.add).toHaveBeenCalledTimes(1);
    });
  });

  describe('a queue whose connection could not be prepared', () => {
    it('is let go (closed, its connection quit), so that the next delivery opens a new one', async () => {
      script.ready = () => Promise.reject(new Error('Connection is closed.'));
      script.add = () => Promise.reject(new Error('Connection is closed.'));
      const producer = new InboxProducer(settings, 'board', jobs);
      await expect(producer.handoff({ delivery, body, request: req, receivedAt: 42 })).rejects.toMatchObject({ code: 'inbox_unavailable' });
      await new Promise((r) => setImmediate(r));
      expect(queues[0]!.close).toHaveBeenCalledTimes(1);
      expect(connections[0]!.quit).toHaveBeenCalledTimes(1);
      script.ready = () => Promise.resolve({});
      script.add = () => Promise.resolve({});
      await producer.handoff({ delivery, body, request: req, receivedAt: 43 });
      expect(queues).toHaveLength(2);
      expect(queues[1]!.add).toHaveBeenCalledTimes(1);
    });

    it('is kept while Redis is still on its way: only a failed preparation lets it go', async () => {
      script.ready = never;
      const producer = new InboxProducer(settings, 'board', jobs);
      await producer.handoff({ delivery, body, request: req, receivedAt: 42 });
      await producer.handoff({ delivery, body, request: req, receivedAt: 43 });
      expect(queues).toHaveLength(1);
      expect(queues[0]!.close).not.toHaveBeenCalled();
    });

    it('that fails after close() closes nothing more: not itself again, nor the queue opened after it', async () => {
      let fail!: (err: Error) => void;
      script.ready = () => new Promise((_, reject) => (fail = reject));
      const producer = new InboxProducer(settings, 'board', jobs);
      await producer.handoff({ delivery, body, request: req, receivedAt: 42 });
      const failing = fail;
      await producer.close();
      script.ready = () => Promise.resolve({});
      await producer.handoff({ delivery, body, request: req, receivedAt: 43 });
      failing(new Error('Connection is closed.'));
      await new Promise((r) => setImmediate(r));
      expect(queues.map((q) => q.close.mock.calls.length)).toEqual([1, 0]);
      expect(connections.map((c) => c.quit.mock.calls.length)).toEqual([1, 0]);
      await producer.handoff({ delivery, body, request: req, receivedAt: 44 });
      expect(queues).toHaveLength(2);
    });
  });
});
