/**
 * The inbox worker's unit-test harness, for inbox-worker.test.ts and the spec files beside it: BullMQ is the
 * scripted fake of test/support/fake-bullmq.ts and the worker's Redis connection a scripted client
 * whose `eval` answers the board-order scripts. A spec file using it mocks both modules first:
 *
 *   jest.mock('bullmq', () => jest.requireActual('../../support/fake-bullmq'));
 *   jest.mock('../../../src/inbox/redis-connection', () => ({
 *     ...jest.requireActual('../../../src/inbox/redis-connection'),
 *     inboxConnection: jest.fn(),
 *   }));
 */
import pino from 'pino';
import { svcBoardWebhook, type DeliveryRecord } from '../../../src';
import type { InboxJob } from '../../../src/inbox/inbox-job';
import { inboxConnection } from '../../../src/inbox/redis-connection';
import * as bull from '../../support/fake-bullmq';
import { BOARD_SECRET, fixture } from '../../support/sign';

export const NOW = 1_800_000_000_000;
export const RECEIVED_AT = NOW - 5_000;

type Op = 'start' | 'finish' | 'release' | 'pass';
interface OrderCall {
  op: Op;
  keys: string[];
  args: Array<string | number>;
}

/** A Redis connection that answers the board-order scripts as each test scripts them. */
export function fakeConnection() {
  const calls: OrderCall[] = [];
  const answers: Record<Op, unknown[]> = { start: [], finish: [], release: [], pass: [] };
  const fallback: Record<Op, unknown> = { start: [1, -1], finish: null, release: 1, pass: null };
  const connection = {
    eval: jest.fn((_script: string, numKeys: number, ...rest: Array<string | number>) => {
      const keys = rest.slice(0, numKeys) as string[];
      const args = rest.slice(numKeys);
      const op: Op = numKeys === 4 ? 'start' : numKeys === 1 ? 'release' : args.length === 5 ? 'finish' : 'pass';
      calls.push({ op, keys, args });
      const answer = answers[op].length > 0 ? answers[op].shift() : fallback[op];
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    }),
    quit: jest.fn(() => Promise.resolve('OK')),
    disconnect: jest.fn(),
  };
  return { connection, calls, answers };
}

/** A job as BullMQ hands it to the processor (`attempts: null`: a job added without attempts). */
export interface FakeJob {
  id: string;
  data: InboxJob;
  attemptsMade: number;
  opts: { attempts?: number };
  finishedOn?: number;
  moveToDelayed: jest.Mock;
  promote: jest.Mock;
}

export function fakeJob(data: InboxJob, { attemptsMade = 0, attempts = 3 as number | null, id = `d-${data.deliveryId}` } = {}): FakeJob {
  return {
    id,
    data,
    attemptsMade,
    opts: attempts === null ? {} : { attempts },
    moveToDelayed: jest.fn(() => Promise.resolve()),
    promote: jest.fn(() => Promise.resolve()),
  };
}

/** A board event's job as the receiver makes it (see boardJobs), its board and sequence as given. */
export function boardJobData(overrides: Partial<InboxJob> = {}, event: Record<string, unknown> = {}): InboxJob {
  const payload = fixture('board', 'task.created', { sequence: 7, ...event });
  const timestamp = Math.floor(RECEIVED_AT / 1000);
  return {
    webhook: 'board',
    deliveryId: payload.id,
    kind: payload.type,
    body: JSON.stringify(payload),
    headers: { 'content-type': 'application/json', 'x-svc-delivery': payload.id, 'x-svc-event': payload.type, 'x-svc-timestamp': String(timestamp) },
    receivedAt: RECEIVED_AT,
    timestamp,
    board: 'B1',
    sequence: 7,
    ordered: true,
    ...overrides,
  };
}

/** The board webhook's worker on the fakes: its handler, inbox and work() options as given; what it logged and told. */
export function boardWorker({ handler = () => undefined as unknown, inbox = {} as Record<string, unknown>, work = {} as Record<string, unknown> } = {}) {
  const chunks: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void chunks.push(s) });
  const conn = fakeConnection();
  jest.mocked(inboxConnection).mockReturnValue(conn.connection as never);
  const records: DeliveryRecord[] = [];
  const board = svcBoardWebhook({
    secret: BOARD_SECRET,
    logger,
    inbox: { connection: 'redis://inbox.test:6379/0', prefix: 'app', ordered: true, gapWaitMs: 60_000, ...inbox },
  } as never)
    .onAny(handler)
    .onDelivery((r) => void records.push(r));
  const handle = board.work(work as never);
  const worker = bull.Worker.made.at(-1)!;
  const queue = bull.Queue.made.at(-1)!;
  const process = (job: ReturnType<typeof fakeJob>, token = 'lock-token') => worker.processor(job, token);
  return { handle, worker, queue, process, conn, records, lines: (): Array<Record<string, any>> => chunks.map((c) => JSON.parse(c)) };
}

/** Lets every queued promise callback run. */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
