import { numberOption, readOptions, type ReadOptions } from '../internal/checks/option-table';

/** `work(options)`: how an inbox worker takes deliveries. */
export interface WorkOptions {
  /** Deliveries this worker runs at once (each board still one at a time in board order). Default 10. */
  concurrency?: number;
  /**
   * How long a job stays with a worker that stopped answering (killed, frozen) before another worker
   * takes it, in ms: BullMQ's `lockDuration`, renewed every half of it while handlers run. Default 30000.
   */
  lockDurationMs?: number;
  /** How often the workers look for jobs whose worker is gone, in ms (BullMQ's `stalledInterval`). Default 30000. */
  stalledIntervalMs?: number;
  /** How often one delivery may be taken back from a gone worker before it becomes a dead letter. Default 3. */
  maxStalledCount?: number;
}

/** The declaration of every `work()` option (docs/options.md is made from it). */
export const WORK_OPTIONS = {
  concurrency: numberOption({
    doc: 'Deliveries this worker runs at once (each board still one at a time in board order).',
    unit: 'count',
    default: 10,
    min: 1,
  }),
  lockDurationMs: numberOption({
    doc: "How long a job stays with a worker that stopped answering (killed, frozen) before another worker takes it: BullMQ's `lockDuration`, renewed every half of it.",
    unit: 'ms',
    default: 30_000,
    min: 100,
  }),
  stalledIntervalMs: numberOption({
    doc: "How often the workers look for jobs whose worker is gone (BullMQ's `stalledInterval`).",
    unit: 'ms',
    default: 30_000,
    min: 100,
  }),
  maxStalledCount: numberOption({
    doc: 'How often one delivery may be taken back from a gone worker before it becomes a dead letter.',
    unit: 'count',
    default: 3,
    min: 0,
  }),
};

export type WorkSettings = ReadOptions<typeof WORK_OPTIONS>;

/** Checks the options of `work()` once, when the worker starts. */
export function workSettings(options: unknown): WorkSettings {
  // Stryker disable next-line ObjectLiteral: the factory's name and the word renamed reach only the refusal's message (test/mutation/EQUIVALENT.inbox-rest.md)
  return readOptions(WORK_OPTIONS, options, { factory: 'work()', renamed: { lockDuration: 'lockDurationMs', stalledInterval: 'stalledIntervalMs' } });
}

// The interface and the table name the same options.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
true satisfies Same<keyof WorkOptions, keyof typeof WORK_OPTIONS>;
