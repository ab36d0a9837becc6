/**
 * The one scripted BullMQ of the unit tests, in place of the package:
 * `jest.mock('bullmq', () => jest.requireActual('../../support/fake-bullmq'))`. Its queues and
 * workers record what the library asks of them; `script` sets what a queue answers. BullMQ itself
 * runs against a real redis-server in test/redis/.
 */
import { EventEmitter } from 'node:events';

/** A job as a fake queue holds it: what the dead-letter tools read and do. */
export interface FakeJob {
  id?: string;
  data: Record<string, unknown>;
  finishedOn?: number;
  attemptsMade: number;
  failedReason?: string;
  failed: boolean;
  isFailed: jest.Mock;
  retry: jest.Mock;
  remove: jest.Mock;
}

/** What every fake queue answers; `resetBullmq()` restores it. */
export const script = {
  /** What `queue.add` resolves or rejects with. */
  add: (_name: string, _data: unknown, _options: unknown): Promise<unknown> => Promise.resolve({}),
  /** How BullMQ's preparation of a queue's connection ends (it waits for Redis, then checks its version). */
  ready: (): Promise<unknown> => Promise.resolve({}),
};

/** An EventEmitter, as BullMQ's queue is: an 'error' event nobody listens to throws. */
export class Queue extends EventEmitter {
  static made: Queue[] = [];
  /** The jobs `getJob` and `getFailed` find. */
  readonly jobs: FakeJob[] = [];
  readonly add = jest.fn((name: string, data: unknown, options: unknown) => script.add(name, data, options));
  readonly waitUntilReady = jest.fn(() => script.ready());
  readonly getJob = jest.fn((id: string): Promise<unknown> => Promise.resolve(this.jobs.find((j) => j.id === id)));
  readonly getFailed = jest.fn(() => Promise.resolve(this.jobs.filter((j) => j.failed)));
  readonly getWaitingCount = jest.fn(() => Promise.resolve(0));
  readonly close = jest.fn(() => Promise.resolve());
  override readonly on = jest.fn((event: string, listener: (...args: any[]) => void) => super.on(event, listener));

  constructor(
    readonly name: string,
    readonly options: { connection?: unknown; prefix?: string } & Record<string, unknown>,
  ) {
    super();
    Queue.made.push(this);
  }

  /** BullMQ's name of one of this queue's keys. */
  toKey(type: string): string {
    return `${this.options.prefix ?? 'bull'}:${this.name}:${type}`;
  }
}

/** A worker: the processor the library gave it, its options and listeners. */
export class Worker {
  static made: Worker[] = [];
  readonly listeners = new Map<string, (...args: unknown[]) => unknown>();
  readonly close = jest.fn(() => Promise.resolve());

  constructor(
    readonly name: string,
    readonly processor: (job: unknown, token?: string) => Promise<void>,
    readonly opts: Record<string, any>,
  ) {
    Worker.made.push(this);
  }

  on(event: string, listener: (...args: unknown[]) => unknown): this {
    this.listeners.set(event, listener);
    return this;
  }

  emit(event: string, ...args: unknown[]): unknown {
    return this.listeners.get(event)?.(...args);
  }
}

/** What a processor throws to say its job was moved to the delayed set. */
export class DelayedError extends Error {}

/** Forgets every queue and worker made, and restores the default script. */
export function resetBullmq(): void {
  Queue.made.length = 0;
  Worker.made.length = 0;
  script.add = () => Promise.resolve({});
  script.ready = () => Promise.resolve({});
}
