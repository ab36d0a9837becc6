import { FakeSvcError } from './emulator-error';

/** A task the clock runs at its time; the manual clock awaits what it returns. */
export type ClockTask = () => unknown;

interface Timer {
  readonly at: number;
  readonly order: number;
  readonly task: ClockTask;
  handle?: NodeJS.Timeout;
}

/**
 * The emulator's time: what schedules retries, lifetimes and the day before a webhook is disabled,
 * and what the state fields (`failingSince`, `disabledAt`, …) report. The real clock follows
 * `Date.now()`; the manual one stands still until `advance(ms)` moves it.
 */
export interface EmulatorClock {
  readonly manual: boolean;
  /** Milliseconds since the epoch, on this clock. */
  now(): number;
  /** Runs `task` once this clock reaches `at`; returns a function that cancels it. */
  at(at: number, task: ClockTask): () => void;
  /**
   * Manual clock only: moves time forward by `ms`, running every task due in that span in time
   * order, each awaited before the clock moves past it. Resolves when the last has settled.
   */
  advance(ms: number): Promise<void>;
  /** Cancels every pending task. */
  stop(): void;
}

/** The longest delay one Node timer keeps; longer waits are re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/** The real clock: tasks run on Node timers. */
export function realClock(): EmulatorClock {
  const timers = new Set<Timer>();
  const arm = (timer: Timer): void => {
    const wait = Math.min(Math.max(0, timer.at - Date.now()), MAX_TIMER_MS);
    timer.handle = setTimeout(() => {
      if (Date.now() < timer.at) return arm(timer);
      timers.delete(timer);
      void Promise.resolve().then(timer.task);
    }, wait);
    timer.handle.unref?.();
  };
  return {
    manual: false,
    now: () => Date.now(),
    at(at, task) {
      const timer: Timer = { at, order: 0, task };
      timers.add(timer);
      arm(timer);
      return () => {
        clearTimeout(timer.handle);
        timers.delete(timer);
      };
    },
    advance: () => Promise.reject(new FakeSvcError('clock_not_manual', 'advance() needs `clock: "manual"`; the real clock moves by itself')),
    stop() {
      for (const timer of timers) clearTimeout(timer.handle);
      timers.clear();
    },
  };
}

/** A clock that stands still at `start` until `advance(ms)` moves it. */
export function manualClock(start: number): EmulatorClock {
  let now = start;
  let order = 0;
  let timers: Timer[] = [];
  let moving: Promise<void> = Promise.resolve();

  const nextDue = (until: number): Timer[] => {
    const due = timers.filter((t) => t.at <= until);
    if (due.length === 0) return [];
    const first = Math.min(...due.map((t) => t.at));
    return due.filter((t) => t.at === first).sort((a, b) => a.order - b.order);
  };

  const run = async (ms: number): Promise<void> => {
    const target = now + ms;
    for (;;) {
      const batch = nextDue(target);
      if (batch.length === 0) break;
      now = Math.max(now, batch[0]!.at);
      timers = timers.filter((t) => !batch.includes(t));
      // Tasks due at one instant run together, as they would on svc; the clock moves on only
      // once all of them (and what they scheduled for that same instant) have settled.
      await Promise.all(batch.map(async (t) => t.task()));
    }
    now = target;
  };

  return {
    manual: true,
    now: () => now,
    at(at, task) {
      const timer: Timer = { at, order: order++, task };
      timers.push(timer);
      return () => {
        timers = timers.filter((t) => t !== timer);
      };
    },
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) return Promise.reject(new FakeSvcError('invalid_input', 'advance(ms) takes a duration of 0 ms or more'));
      // Calls made while one runs queue behind it, so time only ever moves forward in order.
      moving = moving.then(() => run(ms));
      return moving;
    },
    stop() {
      timers = [];
    },
  };
}
