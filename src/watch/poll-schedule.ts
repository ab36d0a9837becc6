import { DueQueue } from './due-queue';

/** When to poll a key next, and whether this poll told its state (a 429 does not: `checked()` waits on). */
export interface NextPoll {
  readonly inMs: number;
  readonly polled: boolean;
}

export interface ScheduleOptions {
  readonly maxInFlight: number;
  readonly maxRequestsPerSecond: number;
  /**
   * Polls one key; resolves with when to poll it next, or undefined to poll it no more. It must
   * not reject (a rejection is taken for "poll no more").
   */
  readonly run: (key: string) => Promise<NextPoll | undefined>;
}

/** Monotonic ms: the schedule never follows a wall clock set back or forward. */
const clock = (): number => performance.now();
/** A burst of at most this much of a second's budget: the rate holds over any window longer than it. */
const BURST_SECONDS = 0.02;

interface Waiter {
  readonly keys: Set<string>;
  readonly resolve: () => void;
}

/**
 * When each webhook is polled, within svc's budget: at most `maxInFlight` polls at once and
 * `maxRequestsPerSecond` started per second (a token bucket holding 20 ms of the rate), none while
 * svc asked to wait (Retry-After). A key is never polled twice at once. New keys are due at once,
 * so a first round goes as fast as the budget lets it and later rounds keep the spread it made.
 */
export class PollSchedule {
  private readonly queue = new DueQueue();
  /** Keys added and not removed: scheduled, or being polled. */
  private readonly active = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();
  /** Keys added and not yet polled, with the waiters of `checked()`. */
  private readonly unpolled = new Set<string>();
  private readonly waiters = new Set<Waiter>();
  private readonly capacity: number;
  private tokens: number;
  private refilledAt = clock();
  private pausedUntil = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private closed = false;

  constructor(private readonly options: ScheduleOptions) {
    this.capacity = Math.max(1, Math.floor(options.maxRequestsPerSecond * BURST_SECONDS));
    this.tokens = this.capacity;
  }

  /** Keys scheduled or being polled. */
  get size(): number {
    return this.active.size;
  }

  has(key: string): boolean {
    return this.active.has(key);
  }

  /** Adds a key, due at once (or in `inMs`); a key already there keeps its schedule. */
  add(key: string, inMs = 0): void {
    if (this.closed || this.active.has(key)) return;
    this.active.add(key);
    this.unpolled.add(key);
    this.queue.schedule(key, clock() + inMs);
    this.wake();
  }

  /** Polls `key` no more (a poll in flight ends as it is). */
  remove(key: string): void {
    this.active.delete(key);
    this.queue.remove(key);
    this.polled(key);
  }

  /** No poll starts before `inMs` from now: svc answered 429 (or 503) with Retry-After. */
  pauseFor(inMs: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, clock() + inMs);
    this.arm(this.pausedUntil);
  }

  /** Resolves when every key there now has been polled once (or removed), or the schedule closed. */
  checked(): Promise<void> {
    if (this.closed || this.unpolled.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.add({ keys: new Set(this.unpolled), resolve }));
  }

  /** Stops polling; resolves when the polls in flight have ended. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const waiter of this.waiters) waiter.resolve();
    this.waiters.clear();
    await Promise.all(this.running.values());
  }

  private wake(): void {
    if (this.closed) return;
    const now = clock();
    if (now < this.pausedUntil) return this.arm(this.pausedUntil);
    this.refill(now);
    while (this.running.size < this.options.maxInFlight && this.tokens >= 1) {
      const key = this.queue.takeDue(now);
      if (key === undefined) break;
      this.tokens -= 1;
      this.start(key);
    }
    // A full house wakes on the next poll's end; otherwise at the next due key or token.
    if (this.running.size >= this.options.maxInFlight) return;
    const due = this.queue.nextDue();
    if (due === undefined) return;
    const token = this.tokens >= 1 ? now : now + ((1 - this.tokens) / this.options.maxRequestsPerSecond) * 1000;
    this.arm(Math.max(due, token));
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.refilledAt) / 1000) * this.options.maxRequestsPerSecond);
    this.refilledAt = now;
  }

  /** One timer, for the earliest moment anything can happen. */
  private arm(at: number): void {
    if (this.closed || (this.timer !== undefined && this.timerAt <= at)) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.wake();
      },
      Math.max(0, Math.ceil(at - clock())),
    );
  }

  private start(key: string): void {
    const done = this.options.run(key).then(
      (next) => this.finish(key, next),
      () => this.finish(key, undefined),
    );
    this.running.set(key, done);
  }

  private finish(key: string, next: NextPoll | undefined): void {
    this.running.delete(key);
    if (next === undefined || next.polled) this.polled(key);
    if (this.active.has(key)) {
      if (next === undefined) this.active.delete(key);
      else this.queue.schedule(key, clock() + next.inMs);
    }
    this.wake();
  }

  private polled(key: string): void {
    if (!this.unpolled.delete(key)) return;
    for (const waiter of this.waiters) {
      if (waiter.keys.delete(key) && waiter.keys.size === 0) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }
}
