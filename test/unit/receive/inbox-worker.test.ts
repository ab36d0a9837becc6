import pino from 'pino';
import { svcBoardWebhook, svcBotWebhook, type DeliveryRecord } from '../../../src';
import type { InboxJob } from '../../../src/inbox/inbox-job';
import { inboxConnection } from '../../../src/inbox/redis-connection';
import { DeliveryTelemetry } from '../../../src/observe/telemetry';
import { DEFAULT_RETENTION_MS } from '../../../src/dedup/delivery-store';
import { BOARD_PLACE_KEPT_MS } from '../../../src/inbox/board-order';
import { BOARD_SECRET, BOT_SECRET, fixture, onBoard } from '../../support/sign';
import { resetBullmq } from '../../support/fake-bullmq';
import { NOW, RECEIVED_AT, boardJobData, fakeConnection, fakeJob, flush, type FakeJob } from './inbox-worker-harness';

/**
 * The inbox worker's own logic, in process: BullMQ is replaced by fakes that keep the processor,
 * the worker's options and its event listeners; the Redis connection is a scripted client whose
 * `eval` answers the board-order scripts. The webhooks are the real ones (`board.work()`,
 * `bot.work()`), so each job is rebuilt into a delivery and routed as in production. What BullMQ
 * and Redis do with it (retries, delays, the scripts) is tested against a real redis-server in
 * test/redis/.
 */

jest.mock('bullmq', () => jest.requireActual('../../support/fake-bullmq'));

jest.mock('../../../src/inbox/redis-connection', () => ({
  ...jest.requireActual('../../../src/inbox/redis-connection'),
  inboxConnection: jest.fn(),
}));

const bull = jest.requireMock('bullmq') as { Queue: any; Worker: any; DelayedError: new () => Error };

const URL = 'redis://inbox.test:6379/0';

/** A pino logger into memory; `failing` makes every write throw. */
function memoryLog() {
  const chunks: string[] = [];
  const state = { failing: false };
  const logger = pino(
    { level: 'debug' },
    {
      write: (s: string) => {
        if (state.failing) throw new Error('the log is gone');
        chunks.push(s);
      },
    },
  );
  return {
    logger,
    state,
    get lines(): Array<Record<string, any>> {
      return chunks.map((c) => JSON.parse(c));
    },
    text: () => chunks.join(''),
  };
}

/** The job of an event verified with the secrets of `boardId` (a resolver's board): its body names that board. */
function verifiedJobData(boardId: string): InboxJob {
  const {
    board: _b,
    sequence: _s,
    ordered: _o,
    ...rest
  } = boardJobData({ verifiedBy: boardId }, onBoard(fixture('board', 'task.created', { sequence: 7 }), boardId));
  return rest;
}

/** An event outside board order: no board, no sequence. */
function plainJobData(overrides: Partial<InboxJob> = {}): InboxJob {
  const { board: _b, sequence: _s, ordered: _o, ...rest } = boardJobData(overrides);
  return { ...rest, ...overrides };
}

type Handler = (event: any, ctx: any) => unknown;

interface Setup {
  handler?: Handler;
  inbox?: Record<string, unknown>;
  work?: Record<string, unknown>;
  options?: Record<string, unknown>;
  listeners?: Array<(r: DeliveryRecord) => unknown>;
}

function boardWorker({ handler = () => undefined, inbox = {}, work, options = {}, listeners = [] }: Setup = {}) {
  const log = memoryLog();
  const conn = fakeConnection();
  jest.mocked(inboxConnection).mockReturnValue(conn.connection as any);
  const board = svcBoardWebhook({
    secret: BOARD_SECRET,
    logger: log.logger,
    inbox: { connection: URL, prefix: 'app', retryDelayMs: 1000, maxRetryDelayMs: 8000, ordered: true, gapWaitMs: 60_000, ...inbox },
    ...options,
  } as any).onAny(handler);
  for (const listener of listeners) board.onDelivery(listener);
  const handle = work === undefined ? board.work() : board.work(work as any);
  const worker = bull.Worker.made.at(-1);
  const queue = bull.Queue.made.at(-1);
  const process = (job: FakeJob, token = 'lock-token') => worker.processor(job, token) as Promise<void>;
  return { board, handle, worker, queue, process, log, conn };
}

/** The log lines of a level (pino's numbers: 30 info, 40 warn, 50 error). */
const at = (lines: Array<Record<string, any>>, level: number) => lines.filter((l) => l.level === level);

async function failure(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

// A failure nobody awaits (a listener's, a logger's, the failed event's) must be caught where it happens.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeAll(() => process.on('unhandledRejection', onUnhandled));
afterAll(() => process.off('unhandledRejection', onUnhandled));

beforeEach(() => {
  unhandled.length = 0;
  resetBullmq();
  jest.spyOn(Date, 'now').mockReturnValue(NOW);
});

afterEach(async () => {
  await flush();
  jest.restoreAllMocks();
  expect(unhandled).toEqual([]);
});

describe('inbox worker', () => {
  describe('setup', () => {
    it('opens one worker connection to the inbox URL and a queue and a BullMQ worker of the webhook on it, under the prefix', () => {
      const { worker, queue, conn } = boardWorker();
      expect(inboxConnection).toHaveBeenLastCalledWith(URL, 'worker');
      expect(queue.name).toBe('board');
      expect(queue.options).toEqual({ connection: conn.connection, prefix: 'app' });
      expect(worker.name).toBe('board');
      expect(worker.opts.connection).toBe(conn.connection);
      expect(worker.opts.prefix).toBe('app');
    });

    it('hears the queue’s errors without failing (an unheard error event would end the process)', () => {
      const { queue } = boardWorker();
      expect(() => queue.emit('error', new Error('ECONNREFUSED'))).not.toThrow();
    });

    it('gives BullMQ the defaults: concurrency 10, lockDuration and stalledInterval 30000 ms, maxStalledCount 3', () => {
      const { worker } = boardWorker();
      expect(worker.opts).toMatchObject({ concurrency: 10, lockDuration: 30_000, stalledInterval: 30_000, maxStalledCount: 3 });
    });

    it('gives BullMQ the work() options as they are', () => {
      const { worker } = boardWorker({ work: { concurrency: 4, lockDurationMs: 5000, stalledIntervalMs: 7000, maxStalledCount: 1 } });
      expect(worker.opts).toMatchObject({ concurrency: 4, lockDuration: 5000, stalledInterval: 7000, maxStalledCount: 1 });
    });

    it('accepts the smallest values: concurrency 1, lockDurationMs and stalledIntervalMs 100, maxStalledCount 0', () => {
      const { worker } = boardWorker({ work: { concurrency: 1, lockDurationMs: 100, stalledIntervalMs: 100, maxStalledCount: 0 } });
      expect(worker.opts).toMatchObject({ concurrency: 1, lockDuration: 100, stalledInterval: 100, maxStalledCount: 0 });
    });

    it.each([
      ['concurrency', 0],
      ['lockDurationMs', 99],
      ['stalledIntervalMs', 99],
      ['maxStalledCount', -1],
      ['concurrency', 2.5],
      ['lockDurationMs', 1000.5],
      ['stalledIntervalMs', Number.NaN],
      ['maxStalledCount', Number.MAX_SAFE_INTEGER + 1],
      ['concurrency', '10'],
      ['lockDurationMs', null],
    ])('refuses %s %p with a RangeError, before opening a connection', (name, value) => {
      const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: pino({ level: 'silent' }), inbox: { connection: URL } });
      jest.mocked(inboxConnection).mockClear();
      expect(() => board.work({ [name]: value } as any)).toThrow(RangeError);
      expect(inboxConnection).not.toHaveBeenCalled();
    });

    it.each([null, 'fast', 5])('refuses options that are not an object (%p) with a TypeError', (value) => {
      const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: pino({ level: 'silent' }), inbox: { connection: URL } });
      jest.mocked(inboxConnection).mockClear();
      expect(() => board.work(value as any)).toThrow(TypeError);
      expect(inboxConnection).not.toHaveBeenCalled();
    });

    it('spaces BullMQ’s retries by the inbox’s retry delays: doubling from retryDelay, at most maxRetryDelay', () => {
      const { worker } = boardWorker();
      const backoff = worker.opts.settings.backoffStrategy as (attemptsMade: number) => number;
      expect([1, 2, 3, 4, 5, 9].map(backoff)).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
    });
  });

  describe('running a job', () => {
    it('rebuilds the delivery and runs the handlers with the event and a context of the job’s attempt', async () => {
      const seen: any[] = [];
      const { process } = boardWorker({ handler: (event, ctx) => void seen.push({ event, ctx }) });
      const data = plainJobData();
      await process(fakeJob(data, { attemptsMade: 2, attempts: 5 }));
      expect(seen).toHaveLength(1);
      const { event, ctx } = seen[0];
      expect(event).toEqual(JSON.parse(data.body));
      expect(ctx).toMatchObject({
        webhook: 'board',
        deliveryId: data.deliveryId,
        type: 'task.created',
        receivedAt: RECEIVED_AT,
        attempt: 3,
        timestamp: data.timestamp,
        sequence: 7,
      });
      expect(ctx.gap).toBeUndefined();
    });

    it('keeps a body’s non-ASCII text as sent', async () => {
      const titles: string[] = [];
      const { process } = boardWorker({ handler: (event) => void titles.push(event.task.title) });
      const data = boardJobData({}, { task: { title: 'Übergabe — 東京 ✓' } });
      await process(fakeJob({ ...data, board: undefined, sequence: undefined }));
      expect(titles).toEqual(['Übergabe — 東京 ✓']);
    });

    it('runs the bot webhook’s handlers with the rebuilt update', async () => {
      const log = memoryLog();
      jest.mocked(inboxConnection).mockReturnValue(fakeConnection().connection as any);
      const updates: any[] = [];
      const bot = svcBotWebhook({ secret: BOT_SECRET, logger: log.logger, inbox: { connection: URL } }).onAny(
        (update, ctx) => void updates.push([update, ctx.attempt]),
      );
      bot.work();
      const worker = bull.Worker.made.at(-1);
      expect(worker.name).toBe('bot');
      const update = fixture('bot', 'messageCreate', { createdAt: new Date(RECEIVED_AT - 1000).toISOString() });
      const body = JSON.stringify(update);
      const data: InboxJob = {
        webhook: 'bot',
        deliveryId: update.id,
        kind: 'messageCreate',
        body,
        headers: { 'content-type': 'application/json', 'x-svc-delivery': update.id },
        receivedAt: RECEIVED_AT,
      };
      await worker.processor(fakeJob(data), 'tok');
      expect(updates).toEqual([[JSON.parse(body).event.messageCreate, 1]]);
    });

    it('logs a processed delivery at info with its id, kind, attempt, queue "processed" and duration', async () => {
      const { process, log } = boardWorker();
      const data = plainJobData();
      jest.spyOn(performance, 'now').mockReturnValueOnce(1000.25).mockReturnValueOnce(1012.4567891);
      await process(fakeJob(data, { attemptsMade: 1 }));
      const info = at(log.lines, 30);
      expect(info).toHaveLength(1);
      expect(info[0]).toMatchObject({
        webhook: 'board',
        deliveryId: data.deliveryId,
        kind: 'task.created',
        attempt: 2,
        queue: 'processed',
        durationMs: 12.207,
      });
      expect(info[0]).not.toHaveProperty('err');
      expect(at(log.lines, 40)).toEqual([]);
      expect(at(log.lines, 50)).toEqual([]);
    });

    it('tells the onDelivery listeners of a processed delivery', async () => {
      const records: DeliveryRecord[] = [];
      const { process } = boardWorker({ listeners: [(r) => void records.push(r)] });
      const data = plainJobData();
      jest.spyOn(performance, 'now').mockReturnValueOnce(50).mockReturnValueOnce(53.5);
      await process(fakeJob(data, { attemptsMade: 1, attempts: 4 }));
      await flush();
      // No code at all for a processed delivery, not even an undefined one.
      expect(records).toStrictEqual([
        {
          webhook: 'board',
          deliveryId: data.deliveryId,
          kind: 'task.created',
          outcome: 'handled',
          status: 200,
          durationMs: 3.5,
          receivedAt: RECEIVED_AT,
          verified: true,
          queue: 'processed',
          attempt: 2,
        },
      ]);
    });

    describe('when a handler fails', () => {
      const boom = () => {
        throw Object.assign(new TypeError('upstream is down'), { code: 'E_UPSTREAM' });
      };

      it('fails the job with a plain copy of the error, not the handler’s own value', async () => {
        let thrown: unknown;
        const { process } = boardWorker({
          handler: () => {
            thrown = Object.assign(new TypeError('upstream is down'), { code: 'E_UPSTREAM', secretField: 'x' });
            throw thrown;
          },
        });
        const err = await failure(process(fakeJob(plainJobData())));
        expect(err).toBeInstanceOf(Error);
        expect(err).not.toBe(thrown);
        expect(err).toMatchObject({ name: 'TypeError', code: 'E_UPSTREAM' });
        expect(err).not.toHaveProperty('secretField');
      });

      it("fails the job with a copy scrubbed of the secrets: BullMQ keeps its message and stack as the dead letter's reason", async () => {
        const token = `svc_bot_3f2504e0-4f89-41d3-9a0c-0305e82c3301_${'Q'.repeat(43)}`;
        const { process } = boardWorker({
          handler: () => {
            throw new Error(`vault said ${BOARD_SECRET}; token ${token}; signature v1=${'ab'.repeat(32)}`);
          },
        });
        const err = await failure(process(fakeJob(plainJobData())));
        for (const text of [err.message, err.stack]) {
          expect(text).not.toContain(BOARD_SECRET);
          expect(text).not.toContain('Q'.repeat(20));
          expect(text).not.toContain('ab'.repeat(32));
        }
        expect(err.message).toContain('vault said [Redacted]');
      });

      it("scrubs the copy of the secrets of the board that verified it too (a resolver's)", async () => {
        const boardSecret = 'the-resolved-board-secret-0123456789';
        jest.mocked(inboxConnection).mockReturnValue(fakeConnection().connection as any);
        svcBoardWebhook({ secret: () => boardSecret, logger: memoryLog().logger, inbox: { connection: URL } })
          .onAny(() => {
            throw new Error(`failed with ${boardSecret}`);
          })
          .work();
        const worker = bull.Worker.made.at(-1);
        const err = await failure(worker.processor(fakeJob(verifiedJobData('B7')), 'tok') as Promise<void>);
        expect(`${err.message}\n${err.stack}`).not.toContain(boardSecret);
      });

      it('fails the job with an Error also when the handler threw something else', async () => {
        const { process } = boardWorker({ handler: () => Promise.reject('not an error') });
        const err = await failure(process(fakeJob(plainJobData())));
        expect(err).toBeInstanceOf(Error);
        expect(err.name).toBe('string');
      });

      it('logs an attempt that will be retried at warn, with the error and the delay of the next retry', async () => {
        const { process, log } = boardWorker({ handler: boom });
        const data = plainJobData();
        jest.spyOn(performance, 'now').mockReturnValueOnce(10).mockReturnValueOnce(10.0004);
        await failure(process(fakeJob(data, { attemptsMade: 2, attempts: 4 })));
        const warn = at(log.lines, 40);
        expect(warn).toHaveLength(1);
        expect(warn[0]).toMatchObject({
          deliveryId: data.deliveryId,
          kind: 'task.created',
          attempt: 3,
          queue: 'retried',
          durationMs: 0,
          retryInMs: 4000,
          err: { code: 'E_UPSTREAM' },
        });
        expect(warn[0]).not.toHaveProperty('attempts');
        expect(at(log.lines, 30)).toEqual([]);
        expect(at(log.lines, 50)).toEqual([]);
      });

      it('keeps the delivery as a dead letter on the last attempt, logged at error with the number of attempts', async () => {
        const { process, log } = boardWorker({ handler: boom });
        const data = plainJobData();
        await failure(process(fakeJob(data, { attemptsMade: 3, attempts: 4 })));
        const error = at(log.lines, 50);
        expect(error).toHaveLength(1);
        expect(error[0]).toMatchObject({
          deliveryId: data.deliveryId,
          kind: 'task.created',
          attempt: 4,
          queue: 'dead',
          attempts: 4,
          err: { code: 'E_UPSTREAM' },
        });
        expect(error[0]).not.toHaveProperty('retryInMs');
        expect(at(log.lines, 40)).toEqual([]);
      });

      it('takes a job without an attempts option as having one attempt: its first failure is final', async () => {
        const { process, log } = boardWorker({ handler: boom });
        await failure(process(fakeJob(plainJobData(), { attempts: null })));
        expect(at(log.lines, 50)).toMatchObject([{ queue: 'dead', attempt: 1, attempts: 1 }]);
      });

      it('tells the listeners a rejected delivery with code handler_failed, status 500, and whether it is retried or dead', async () => {
        const records: DeliveryRecord[] = [];
        const { process } = boardWorker({ handler: boom, listeners: [(r) => void records.push(r)] });
        const data = plainJobData();
        jest.spyOn(performance, 'now').mockReturnValueOnce(0).mockReturnValueOnce(2).mockReturnValueOnce(0).mockReturnValueOnce(1);
        await failure(process(fakeJob(data, { attemptsMade: 0, attempts: 2 })));
        await failure(process(fakeJob(data, { attemptsMade: 1, attempts: 2 })));
        await flush();
        const common = {
          webhook: 'board',
          deliveryId: data.deliveryId,
          kind: 'task.created',
          outcome: 'rejected',
          status: 500,
          code: 'handler_failed',
          receivedAt: RECEIVED_AT,
          verified: true,
        };
        expect(records).toEqual([
          { ...common, durationMs: 2, queue: 'retried', attempt: 1 },
          { ...common, durationMs: 1, queue: 'dead', attempt: 2 },
        ]);
      });

      it('fails the job without running a handler when its body no longer parses (a failure, not a timeout, in its record)', async () => {
        const handler = jest.fn();
        const records: DeliveryRecord[] = [];
        const { process, log } = boardWorker({ handler, listeners: [(r) => void records.push(r)] });
        const err = await failure(process(fakeJob({ ...plainJobData(), body: '{"id": ' })));
        expect(err.code).toBe('invalid_json');
        expect(handler).not.toHaveBeenCalled();
        expect(at(log.lines, 40)).toMatchObject([{ queue: 'retried', err: { code: 'invalid_json' } }]);
        await flush();
        expect(records).toMatchObject([{ outcome: 'rejected', code: 'handler_failed' }]);
      });

      it('fails the job without running a handler when the body is no longer a delivery', async () => {
        const handler = jest.fn();
        const { process } = boardWorker({ handler });
        const err = await failure(process(fakeJob({ ...plainJobData(), body: '{"type": "task.created"}' })));
        expect(err.code).toBe('schema_violation');
        expect(handler).not.toHaveBeenCalled();
      });
    });

    describe('BullMQ’s failed event', () => {
      it('ignores the failures the processor reported itself', async () => {
        const records: DeliveryRecord[] = [];
        const { process, worker, log } = boardWorker({
          handler: () => {
            throw new Error('down');
          },
          listeners: [(r) => void records.push(r)],
        });
        const job = fakeJob(plainJobData(), { attemptsMade: 2, attempts: 3 });
        const err = await failure(process(job));
        job.attemptsMade = 3;
        job.finishedOn = NOW;
        worker.emit('failed', job, err);
        await flush();
        expect(at(log.lines, 50)).toHaveLength(1);
        expect(records).toHaveLength(1);
      });

      it('ignores an event without a job', async () => {
        const { worker, log } = boardWorker();
        expect(() => worker.emit('failed', undefined, new Error('stalled'))).not.toThrow();
        await flush();
        expect(log.lines).toEqual([]);
      });

      it('ignores a job BullMQ failed but will retry (not finished)', async () => {
        const records: DeliveryRecord[] = [];
        const { worker, log, conn } = boardWorker({ listeners: [(r) => void records.push(r)] });
        worker.emit('failed', fakeJob(boardJobData(), { attemptsMade: 1 }), new Error('job stalled more than allowable limit'));
        await flush();
        expect(log.lines).toEqual([]);
        expect(records).toEqual([]);
        expect(conn.calls).toEqual([]);
      });

      it('keeps a job BullMQ failed itself (stalled too often) as a dead letter: logged at error and told to the listeners', async () => {
        const records: DeliveryRecord[] = [];
        const { worker, log } = boardWorker({ listeners: [(r) => void records.push(r)] });
        const data = plainJobData();
        const job = { ...fakeJob(data, { attemptsMade: 2 }), finishedOn: NOW };
        worker.emit('failed', job, Object.assign(new Error('job stalled more than allowable limit'), { code: 'E_STALLED' }));
        await flush();
        expect(at(log.lines, 50)).toEqual([
          expect.objectContaining({
            deliveryId: data.deliveryId,
            kind: 'task.created',
            attempt: 2,
            queue: 'dead',
            err: expect.objectContaining({ code: 'E_STALLED' }),
          }),
        ]);
        expect(records).toEqual([
          {
            webhook: 'board',
            deliveryId: data.deliveryId,
            kind: 'task.created',
            outcome: 'rejected',
            status: 500,
            code: 'handler_failed',
            durationMs: 0,
            receivedAt: RECEIVED_AT,
            verified: true,
            queue: 'dead',
            attempt: 2,
          },
        ]);
      });

      it('tells no listener when there is none', async () => {
        const { worker, log } = boardWorker();
        worker.emit('failed', { ...fakeJob(plainJobData()), finishedOn: NOW }, new Error('stalled'));
        await flush();
        expect(at(log.lines, 50)).toHaveLength(1);
      });

      it('moves the board on past an ordered event BullMQ failed, and wakes the board’s next event', async () => {
        const { worker, conn, queue } = boardWorker();
        const next = fakeJob(boardJobData(), { id: 'd-next' });
        queue.getJob.mockResolvedValue(next);
        conn.answers.finish.push('d-next');
        const job = { ...fakeJob(boardJobData({ sequence: 9 }), { id: 'd-dead' }), finishedOn: NOW };
        worker.emit('failed', job, new Error('stalled'));
        await flush();
        expect(conn.calls).toEqual([
          {
            op: 'finish',
            keys: ['app:board:order:B1:last', 'app:board:order:B1:pending', 'app:board:order:B1:lock'],
            args: ['d-dead', 9, expect.any(Number), 'app:board:', '0'],
          },
        ]);
        expect(queue.getJob).toHaveBeenCalledWith('d-next');
        expect(next.promote).toHaveBeenCalledTimes(1);
      });

      it.each([
        ['an unordered event', { ordered: false }],
        ['an event without a board', { board: undefined }],
        ['an event without a sequence', { sequence: undefined }],
      ])('leaves the board order alone for %s', async (_what, overrides) => {
        const { worker, conn, log } = boardWorker();
        worker.emit('failed', { ...fakeJob(boardJobData(overrides)), finishedOn: NOW }, new Error('stalled'));
        await flush();
        expect(conn.calls).toEqual([]);
        expect(at(log.lines, 50)).toHaveLength(1);
      });

      it('logs at error, with the job id, when the dead letter cannot be recorded', async () => {
        const records: DeliveryRecord[] = [];
        const { worker, conn, log } = boardWorker({ listeners: [(r) => void records.push(r)] });
        conn.answers.finish.push(Object.assign(new Error('READONLY'), { code: 'E_READONLY' }));
        worker.emit('failed', { ...fakeJob(boardJobData(), { id: 'd-x' }), finishedOn: NOW }, new Error('stalled'));
        await flush();
        expect(at(log.lines, 50)).toEqual([expect.objectContaining({ jobId: 'd-x', err: expect.objectContaining({ code: 'E_READONLY' }) })]);
        expect(records).toEqual([]);
      });
    });

    it('logs a redis error of the worker at error', () => {
      const { worker, log } = boardWorker();
      worker.emit('error', Object.assign(new Error('ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      expect(at(log.lines, 50)).toEqual([expect.objectContaining({ err: expect.objectContaining({ code: 'ECONNREFUSED' }) })]);
    });

    it('logs a job taken back from a stalled worker at warn, with its job id', () => {
      const { worker, log } = boardWorker();
      worker.emit('stalled', 'd-abc');
      expect(at(log.lines, 40)).toEqual([expect.objectContaining({ jobId: 'd-abc' })]);
    });
  });

  describe('listeners and loggers that fail', () => {
    it('logs a listener that throws at error, and still tells the others', async () => {
      const records: DeliveryRecord[] = [];
      const { process, log } = boardWorker({
        listeners: [
          () => {
            throw Object.assign(new Error('listener'), { code: 'E_LISTENER' });
          },
          (r) => void records.push(r),
        ],
      });
      await process(fakeJob(plainJobData()));
      await flush();
      expect(records).toHaveLength(1);
      expect(at(log.lines, 50)).toEqual([expect.objectContaining({ err: expect.objectContaining({ code: 'E_LISTENER' }) })]);
    });

    it('does not let a logger that throws change a processed delivery, a failed one or the records', async () => {
      const records: DeliveryRecord[] = [];
      const { process, log } = boardWorker({
        handler: (event) => {
          if (event.sequence === 8) throw Object.assign(new Error('down'), { code: 'E_DOWN' });
        },
        listeners: [(r) => void records.push(r)],
      });
      log.state.failing = true;
      await expect(process(fakeJob(boardJobData({}, { sequence: 7 })))).resolves.toBeUndefined();
      expect((await failure(process(fakeJob(boardJobData({ sequence: 8 }, { sequence: 8 }))))).code).toBe('E_DOWN');
      await flush();
      expect(records.map((r) => r.queue)).toEqual(['processed', 'retried']);
    });

    it('does not let a logger that throws turn a listener’s failure into an unhandled one', async () => {
      const { process, log } = boardWorker({
        listeners: [
          () => {
            throw new Error('listener');
          },
        ],
      });
      log.state.failing = true;
      await process(fakeJob(plainJobData()));
      await flush();
      expect(unhandled).toEqual([]);
    });
  });

  describe('handlers that do not settle', () => {
    it('fails the attempt with handler_timeout past abandonAfter (its record says so), and tells the handlers through ctx.signal', async () => {
      let ctx: any;
      let finish!: () => void;
      const records: DeliveryRecord[] = [];
      const { process, log } = boardWorker({
        listeners: [(r) => void records.push(r)],
        options: { timeoutMs: 1, abandonAfterMs: 2 },
        handler: (_e, c) => {
          ctx = c;
          return new Promise<void>((resolve) => (finish = resolve));
        },
      });
      const data = plainJobData();
      const err = await failure(process(fakeJob(data)));
      expect(err.code).toBe('handler_timeout');
      expect(ctx.signal.aborted).toBe(true);
      expect(at(log.lines, 40)).toMatchObject([{ queue: 'retried', err: { code: 'handler_timeout' } }]);
      await flush();
      expect(records).toMatchObject([{ outcome: 'rejected', code: 'handler_timeout', queue: 'retried' }]);
      finish();
      await flush();
      expect(at(log.lines, 40)[1]).toMatchObject({ deliveryId: data.deliveryId, kind: 'task.created', state: 'succeeded' });
    });

    it('labels a handler that throws an error of its own with code handler_timeout as handler_failed: only an abandoned run is a timeout', async () => {
      const records: DeliveryRecord[] = [];
      const { process } = boardWorker({
        listeners: [(r) => void records.push(r)],
        handler: () => {
          throw Object.assign(new Error('upstream timed out'), { code: 'handler_timeout' });
        },
      });
      await failure(process(fakeJob(plainJobData())));
      await flush();
      expect(records).toMatchObject([{ outcome: 'rejected', code: 'handler_failed' }]);
    });
  });

  describe('secrets in the handlers’ log', () => {
    const RESOLVED = 'resolved-board-secret-0123456789abcdef';

    function resolvingWorker(resolver: jest.Mock) {
      const log = memoryLog();
      jest.mocked(inboxConnection).mockReturnValue(fakeConnection().connection as any);
      const board = svcBoardWebhook({ secret: resolver, logger: log.logger, inbox: { connection: URL } }).onAny((_e, ctx) =>
        ctx.log.info({ leak: `key ${RESOLVED}` }, 'handler'),
      );
      board.work();
      const worker = bull.Worker.made.at(-1);
      return { log, process: (job: FakeJob) => worker.processor(job, 'tok') as Promise<void> };
    }

    it('asks the resolver for the secrets of the board that verified the job, and drops them from the handlers’ log', async () => {
      const resolver = jest.fn(() => Promise.resolve(RESOLVED));
      const { log, process } = resolvingWorker(resolver);
      await process(fakeJob(verifiedJobData('B7')));
      expect(resolver).toHaveBeenCalledWith({ boardId: 'B7' });
      expect(log.text()).not.toContain(RESOLVED);
      expect(log.lines.find((l) => l.leak !== undefined)?.leak).toContain('[Redacted]');
    });

    it('drops them too when they are known already', async () => {
      const resolver = jest.fn(() => RESOLVED);
      const { log, process } = resolvingWorker(resolver);
      await process(fakeJob(verifiedJobData('B7')));
      await process(fakeJob(verifiedJobData('B7')));
      expect(resolver).toHaveBeenCalledTimes(1);
      expect(log.lines.filter((l) => l.leak !== undefined)).toHaveLength(2);
      expect(log.text()).not.toContain(RESOLVED);
    });

    it('still runs the handlers when the resolver fails or does not know the board', async () => {
      const resolver = jest.fn((claim: { boardId: string }) => (claim.boardId === 'B-fail' ? Promise.reject(new Error('vault down')) : undefined));
      const { log, process } = resolvingWorker(resolver);
      await process(fakeJob(verifiedJobData('B-fail')));
      await process(fakeJob(verifiedJobData('B-unknown')));
      // Now known as unknown: the lookup fails at once.
      await process(fakeJob(verifiedJobData('B-unknown')));
      expect(log.lines.filter((l) => l.leak !== undefined)).toHaveLength(3);
      expect(log.lines.filter((l) => l.queue === 'processed')).toHaveLength(3);
    });

    it('asks no resolver for a job that names no verifying board', async () => {
      const resolver = jest.fn(() => RESOLVED);
      const { log, process } = resolvingWorker(resolver);
      await process(fakeJob(plainJobData()));
      expect(resolver).not.toHaveBeenCalled();
      expect(log.lines.filter((l) => l.queue === 'processed')).toHaveLength(1);
    });

    it('runs a job that names a verifying board on a webhook with one fixed secret, its handlers’ log as usual', async () => {
      const { process, log } = boardWorker({ handler: (_e, ctx) => ctx.log.info({ leak: 'none' }, 'handler') });
      await process(fakeJob(verifiedJobData('B7')));
      expect(log.lines.filter((l) => l.leak === 'none')).toHaveLength(1);
      expect(log.lines.filter((l) => l.queue === 'processed')).toHaveLength(1);
    });
  });

  describe('telemetry', () => {
    it('runs the handlers inside the attempt’s trace and ends it with the outcome', async () => {
      const wrapped: string[] = [];
      const trace = {
        handlers: jest.fn((calls: Array<() => unknown>) =>
          calls.map((call) => () => {
            wrapped.push('in span');
            return call();
          }),
        ),
        end: jest.fn(),
      };
      const processSpy = jest.spyOn(DeliveryTelemetry.prototype, 'process').mockReturnValue(trace as any);
      let fail = false;
      const { process } = boardWorker({
        handler: () => {
          if (fail) throw new Error('down');
        },
      });
      const carrier = { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` };
      const data = { ...plainJobData(), trace: carrier };
      await process(fakeJob(data, { attemptsMade: 1 }));
      expect(processSpy).toHaveBeenCalledWith({ deliveryId: data.deliveryId, kind: 'task.created', attempt: 2, receivedIn: carrier });
      expect(wrapped).toEqual(['in span']);
      expect(trace.end).toHaveBeenLastCalledWith('processed', undefined);
      fail = true;
      await failure(process(fakeJob(data, { attemptsMade: 0, attempts: 2 })));
      expect(trace.end).toHaveBeenLastCalledWith('retried', 'handler_failed');
      await failure(process(fakeJob(data, { attemptsMade: 1, attempts: 2 })));
      expect(trace.end).toHaveBeenLastCalledWith('dead', 'handler_failed');
    });
  });

  describe('close()', () => {
    it('tells running handlers to stop, then closes the worker, the queue and the connection, in that order', async () => {
      const events: string[] = [];
      let release!: () => void;
      const { process, handle, worker, queue, conn } = boardWorker({
        handler: (_e, ctx) => {
          ctx.signal.addEventListener('abort', () => events.push('aborted'));
          return new Promise<void>((resolve) => (release = resolve));
        },
      });
      worker.close.mockImplementation(async () => void events.push('worker'));
      queue.close.mockImplementation(async () => void events.push('queue'));
      conn.connection.quit.mockImplementation(async () => void events.push('quit') as any);
      const running = process(fakeJob(plainJobData()));
      try {
        await handle.close();
        expect(events).toEqual(['aborted', 'worker', 'queue', 'quit']);
        expect(conn.connection.disconnect).not.toHaveBeenCalled();
      } finally {
        release();
        await running;
      }
    });

    it('closes once however often it is called', async () => {
      const { handle, worker, queue, conn } = boardWorker();
      const first = handle.close();
      expect(handle.close()).toBe(first);
      await first;
      await handle.close();
      expect(worker.close).toHaveBeenCalledTimes(1);
      expect(queue.close).toHaveBeenCalledTimes(1);
      expect(conn.connection.quit).toHaveBeenCalledTimes(1);
    });

    it('still quits the connection when the queue fails to close, and disconnects when quitting fails', async () => {
      const { handle, queue, conn } = boardWorker();
      queue.close.mockRejectedValue(new Error('closed'));
      conn.connection.quit.mockRejectedValue(new Error('not connected'));
      await expect(handle.close()).resolves.toBeUndefined();
      expect(conn.connection.quit).toHaveBeenCalledTimes(1);
      expect(conn.connection.disconnect).toHaveBeenCalledTimes(1);
    });

    it('does not abort a run that has already settled', async () => {
      const contexts: any[] = [];
      const { process, handle } = boardWorker({ handler: (_e, ctx) => void contexts.push(ctx) });
      await process(fakeJob(plainJobData()));
      const second = process(fakeJob(plainJobData()));
      const closed = handle.close();
      await second;
      await closed;
      expect(contexts.map((c) => c.signal.aborted)).toEqual([false, false]);
    });
  });
});

describe('inbox worker in board order', () => {
  const KEYS = ['app:board:order:B1:last', 'app:board:order:B1:pending', 'app:board:order:B1:lock', 'app:board:order:B1:passed'];

  it('asks for the board’s turn with the board, job, sequence, time, gap wait, retention and key prefix (not the arrival: the gap wait counts from the first turn)', async () => {
    const { process, conn } = boardWorker();
    const data = boardJobData();
    await process(fakeJob(data, { id: 'd-1' }));
    expect(conn.calls[0]).toEqual({ op: 'start', keys: KEYS, args: ['d-1', 7, NOW, 60_000, DEFAULT_RETENTION_MS, 'app:board:', '0', BOARD_PLACE_KEPT_MS] });
  });

  it('remembers a board for the retry window plus the gap wait when that is longer than the default retention', async () => {
    const { process, conn } = boardWorker({ inbox: { retryForMs: 2 * DEFAULT_RETENTION_MS, gapWaitMs: 90_000 } });
    await process(fakeJob(boardJobData()));
    expect(conn.calls[0]!.args[4]).toBe(2 * DEFAULT_RETENTION_MS + 90_000);
  });

  it('remembers a board for the default retention at least', async () => {
    const { process, conn } = boardWorker({ inbox: { retryForMs: 0, gapWaitMs: 0 } });
    await process(fakeJob(boardJobData()));
    expect(conn.calls[0]!.args.slice(3, 5)).toEqual([0, DEFAULT_RETENTION_MS]);
  });

  it('gives the handlers the gap it was told to hand over', async () => {
    const gaps: unknown[] = [];
    const { process, conn } = boardWorker({ handler: (_e, ctx) => void gaps.push(ctx.gap) });
    conn.answers.start.push([1, 4]);
    await process(fakeJob(boardJobData()));
    expect(gaps).toEqual([{ from: 4, to: 6 }]);
  });

  describe('after a processed event', () => {
    it('moves the board past it (handled) and wakes the board’s next event', async () => {
      const { process, conn, queue } = boardWorker();
      const next = fakeJob(boardJobData({ sequence: 8 }), { id: 'd-next' });
      queue.getJob.mockResolvedValue(next);
      conn.answers.finish.push('d-next');
      await process(fakeJob(boardJobData(), { id: 'd-1' }));
      expect(conn.calls.map((c) => c.op)).toEqual(['start', 'finish']);
      expect(conn.calls[1]).toEqual({ op: 'finish', keys: KEYS.slice(0, 3), args: ['d-1', 7, BOARD_PLACE_KEPT_MS, 'app:board:', '1'] });
      expect(queue.getJob).toHaveBeenCalledWith('d-next');
      expect(next.promote).toHaveBeenCalledTimes(1);
    });

    it('wakes nobody when the board has no next event, or the next one is this job', async () => {
      const { process, conn, queue } = boardWorker();
      conn.answers.finish.push(null, 'd-self');
      await process(fakeJob(boardJobData(), { id: 'd-1' }));
      await process(fakeJob(boardJobData(), { id: 'd-self' }));
      expect(conn.calls.filter((c) => c.op === 'finish')).toHaveLength(2);
      expect(queue.getJob).not.toHaveBeenCalled();
    });

    it('leaves a next job that is gone or not delayed as it is, without a warning', async () => {
      const { process, conn, queue, log } = boardWorker();
      const running = fakeJob(boardJobData(), { id: 'd-running' });
      running.promote.mockRejectedValue(new Error('Job is not in the delayed state'));
      queue.getJob.mockResolvedValueOnce(undefined).mockResolvedValueOnce(running);
      conn.answers.finish.push('d-gone', 'd-running');
      await process(fakeJob(boardJobData()));
      await process(fakeJob(boardJobData()));
      expect(running.promote).toHaveBeenCalledTimes(1);
      expect(at(log.lines, 40)).toEqual([]);
      expect(at(log.lines, 30).map((l) => l.queue)).toEqual(['processed', 'processed']);
    });

    it('marks an unordered event’s sequence as passed before its handlers run, and wakes the board’s next event', async () => {
      const passedBeforeHandler: number[] = [];
      const { process, conn, queue } = boardWorker({ handler: () => void passedBeforeHandler.push(conn.calls.length) });
      const next = fakeJob(boardJobData(), { id: 'd-next' });
      queue.getJob.mockResolvedValue(next);
      conn.answers.pass.push('d-next');
      await process(fakeJob(boardJobData({ ordered: false, sequence: 12 })));
      expect(conn.calls).toEqual([{ op: 'pass', keys: [KEYS[0], KEYS[1], KEYS[3]], args: [12, DEFAULT_RETENTION_MS, 'app:board:'] }]);
      expect(passedBeforeHandler).toEqual([1]);
      expect(next.promote).toHaveBeenCalledTimes(1);
    });

    it('runs an unordered event whose sequence cannot be marked as passed, with a warning', async () => {
      const handler = jest.fn();
      const { process, conn, log } = boardWorker({ handler });
      conn.answers.pass.push(Object.assign(new Error('READONLY'), { code: 'E_READONLY' }));
      const data = boardJobData({ ordered: false });
      await expect(process(fakeJob(data))).resolves.toBeUndefined();
      expect(handler).toHaveBeenCalledTimes(1);
      expect(at(log.lines, 40)).toEqual([expect.objectContaining({ deliveryId: data.deliveryId, err: expect.objectContaining({ code: 'E_READONLY' }) })]);
    });
  });

  describe('after a failed event', () => {
    const fail = () => {
      throw new Error('down');
    };

    it('lets go of the board but keeps the event’s place when it will be retried', async () => {
      const { process, conn } = boardWorker({ handler: fail });
      await failure(process(fakeJob(boardJobData(), { id: 'd-1', attemptsMade: 0, attempts: 3 })));
      expect(conn.calls.map((c) => c.op)).toEqual(['start', 'release']);
      expect(conn.calls[1]).toEqual({ op: 'release', keys: [KEYS[2]], args: ['d-1'] });
    });

    it('moves the board past a dead letter (not handled) and wakes the next event', async () => {
      const { process, conn, queue } = boardWorker({ handler: fail });
      const next = fakeJob(boardJobData(), { id: 'd-next' });
      queue.getJob.mockResolvedValue(next);
      conn.answers.finish.push('d-next');
      await failure(process(fakeJob(boardJobData(), { id: 'd-1', attemptsMade: 2, attempts: 3 })));
      expect(conn.calls[1]).toEqual({ op: 'finish', keys: KEYS.slice(0, 3), args: ['d-1', 7, BOARD_PLACE_KEPT_MS, 'app:board:', '0'] });
      expect(next.promote).toHaveBeenCalledTimes(1);
    });

    it('does nothing more to the board for an unordered event, retried or dead: its sequence was passed when it was taken up', async () => {
      const { process, conn } = boardWorker({ handler: fail });
      await failure(process(fakeJob(boardJobData({ ordered: false }), { attemptsMade: 0, attempts: 2 })));
      expect(conn.calls.map((c) => c.op)).toEqual(['pass']);
      await failure(process(fakeJob(boardJobData({ ordered: false }), { attemptsMade: 1, attempts: 2 })));
      expect(conn.calls.map((c) => c.op)).toEqual(['pass', 'pass']);
    });
  });

  it.each([
    ['no board', { board: undefined }],
    ['no sequence', { sequence: undefined }],
  ])('runs an event with %s at once, outside the board order', async (_what, overrides) => {
    const handler = jest.fn();
    const { process, conn } = boardWorker({ handler });
    await process(fakeJob(boardJobData(overrides)));
    expect(handler).toHaveBeenCalled();
    expect(conn.calls).toEqual([]);
  });

  it('logs at warn, and keeps the outcome, when the board order cannot be recorded', async () => {
    const records: DeliveryRecord[] = [];
    let failing = false;
    const { process, conn, log } = boardWorker({
      handler: () => {
        if (failing) throw Object.assign(new Error('down'), { code: 'E_DOWN' });
      },
      listeners: [(r) => void records.push(r)],
    });
    const broken = () => Object.assign(new Error('READONLY'), { code: 'E_READONLY' });
    conn.answers.finish.push(broken());
    conn.answers.release.push(broken());
    const data = boardJobData();
    await expect(process(fakeJob(data))).resolves.toBeUndefined();
    failing = true;
    expect((await failure(process(fakeJob(data)))).code).toBe('E_DOWN');
    await flush();
    const warnings = at(log.lines, 40).filter((l) => l.queue === undefined);
    expect(warnings).toEqual([
      expect.objectContaining({ deliveryId: data.deliveryId, err: expect.objectContaining({ code: 'E_READONLY' }) }),
      expect.objectContaining({ deliveryId: data.deliveryId, err: expect.objectContaining({ code: 'E_READONLY' }) }),
    ]);
    expect(records.map((r) => r.queue)).toEqual(['processed', 'retried']);
  });

  it('does not let a logger that throws fail a job whose board order cannot be recorded', async () => {
    const { process, conn, log } = boardWorker();
    conn.answers.finish.push(new Error('READONLY'));
    log.state.failing = true;
    await expect(process(fakeJob(boardJobData()))).resolves.toBeUndefined();
  });

  describe('an event handed over already (its worker stopped before BullMQ marked it processed)', () => {
    it('is not run again: the board moves past it as handled and its next event is woken', async () => {
      const handler = jest.fn();
      const records: DeliveryRecord[] = [];
      const { process, conn, queue, log } = boardWorker({ handler, listeners: [(r) => void records.push(r)] });
      const next = fakeJob(boardJobData(), { id: 'd-next' });
      queue.getJob.mockResolvedValue(next);
      conn.answers.start.push([2, 0]);
      conn.answers.finish.push('d-next');
      const data = boardJobData();
      const job = fakeJob(data, { id: 'd-1', attemptsMade: 1 });
      await expect(process(job)).resolves.toBeUndefined();
      await flush();
      expect(handler).not.toHaveBeenCalled();
      expect(job.moveToDelayed).not.toHaveBeenCalled();
      expect(conn.calls.map((c) => c.op)).toEqual(['start', 'finish']);
      expect(conn.calls[1]!.args).toEqual(['d-1', 7, BOARD_PLACE_KEPT_MS, 'app:board:', '1']);
      expect(next.promote).toHaveBeenCalledTimes(1);
      expect(log.lines).toEqual([expect.objectContaining({ level: 30, deliveryId: data.deliveryId, kind: 'task.created', attempt: 2 })]);
      expect(records).toEqual([]);
    });

    it('is not run again when the logger throws either', async () => {
      const handler = jest.fn();
      const { process, conn, log } = boardWorker({ handler });
      conn.answers.start.push([2, 0]);
      log.state.failing = true;
      await expect(process(fakeJob(boardJobData()))).resolves.toBeUndefined();
      expect(handler).not.toHaveBeenCalled();
      expect(conn.calls.map((c) => c.op)).toEqual(['start', 'finish']);
    });
  });

  describe('an event that must wait for its turn', () => {
    it('goes back to BullMQ’s delayed set for the wait it was told, without running', async () => {
      const handler = jest.fn();
      const { process, conn } = boardWorker({ handler });
      conn.answers.start.push([0, 1500], [0, 0]);
      const job = fakeJob(boardJobData(), { id: 'd-1' });
      const err = await failure(process(job, 'the-lock'));
      expect(err).toBeInstanceOf(bull.DelayedError);
      expect(job.moveToDelayed).toHaveBeenCalledWith(NOW + 1500, 'the-lock');
      expect(handler).not.toHaveBeenCalled();
      expect(job.promote).not.toHaveBeenCalled();
      expect(conn.calls.map((c) => c.op)).toEqual(['start', 'start']);
    });

    it('waits 30 s (a safety net) when it waits for its predecessor to end rather than for a time', async () => {
      const { process, conn } = boardWorker();
      conn.answers.start.push([0, 0], [0, 0]);
      const job = fakeJob(boardJobData());
      await failure(process(job));
      expect(job.moveToDelayed).toHaveBeenCalledWith(NOW + 30_000, 'lock-token');
    });

    it('looks again after the move, only asking, and promotes itself when its predecessor ended meanwhile', async () => {
      const { process, conn } = boardWorker();
      conn.answers.start.push([0, 0], [1, -1]);
      const job = fakeJob(boardJobData(), { id: 'd-1' });
      const err = await failure(process(job));
      expect(err).toBeInstanceOf(bull.DelayedError);
      expect(conn.calls[1]).toEqual({ op: 'start', keys: KEYS, args: ['d-1', 7, NOW, 60_000, DEFAULT_RETENTION_MS, 'app:board:', '1', BOARD_PLACE_KEPT_MS] });
      expect(job.promote).toHaveBeenCalledTimes(1);
    });

    it('still ends as delayed when promoting itself fails', async () => {
      const { process, conn } = boardWorker();
      conn.answers.start.push([0, 0], [1, -1]);
      const job = fakeJob(boardJobData());
      job.promote.mockRejectedValue(new Error('not delayed'));
      expect(await failure(process(job))).toBeInstanceOf(bull.DelayedError);
    });

    it('neither logs nor tells the listeners anything', async () => {
      const records: DeliveryRecord[] = [];
      const { process, conn, log } = boardWorker({ listeners: [(r) => void records.push(r)] });
      conn.answers.start.push([0, 0], [0, 0]);
      await failure(process(fakeJob(boardJobData())));
      await flush();
      expect(log.lines).toEqual([]);
      expect(records).toEqual([]);
    });
  });
});
