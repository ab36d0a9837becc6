import { DAY_MS, DEFAULT_RETENTION_MS } from '../internal/svc-limits';
import { optionNumber } from '../internal/option-number';

export interface InboxOptions {
  /** The Redis the queues live in (`redis://host:port/db`); the de-dup store's Redis can serve both. */
  url: string;
  /** Prefix of the queues' Redis keys, so several applications can share one Redis. Default `svc-webhooks`. */
  prefix?: string;
  /** How long a failing delivery is retried before it becomes a dead letter, in ms. Default: a day, as long as svc retries. */
  retryFor?: number;
  /** The first retry's delay in ms; each next one doubles, up to `maxRetryDelay`. Default 1000. */
  retryDelay?: number;
  /** The longest delay between two retries, in ms. Default one hour (svc's own longest), or `retryDelay` when that is longer. */
  maxRetryDelay?: number;
  /**
   * Board order: `true` hands every board event (but `ping`) to the handlers in `sequence` order,
   * one at a time per board; a list of event types orders those types only. Default `false`.
   */
  ordered?: boolean | readonly string[];
  /** How long an ordered event waits for a missing predecessor before it is handled with `ctx.gap`, in ms, from when a worker first takes it up. Default 2 minutes. */
  gapWaitMs?: number;
  /**
   * How long a processed delivery's job is kept, in ms: a repeat enqueued in that time (after a
   * receiver crashed between enqueueing and recording the delivery) finds it and is not run again.
   * Default: a day and an hour, as long as the de-dup store remembers ids.
   */
  keepProcessedFor?: number;
  /** Longest wait for Redis to take a delivery, in ms; past it the delivery is refused with 503 and retried by svc. Default 2000. */
  enqueueTimeoutMs?: number;
}

export interface InboxSettings {
  readonly url: string;
  readonly prefix: string;
  readonly retryForMs: number;
  readonly retryDelayMs: number;
  readonly maxRetryDelayMs: number;
  /** How many runs the retry window allows (the first run included). */
  readonly attempts: number;
  readonly ordered: boolean | ReadonlySet<string>;
  readonly gapWaitMs: number;
  readonly keepProcessedMs: number;
  readonly enqueueTimeoutMs: number;
}

const KNOWN = new Set(['url', 'prefix', 'retryFor', 'retryDelay', 'maxRetryDelay', 'ordered', 'gapWaitMs', 'keepProcessedFor', 'enqueueTimeoutMs']);

/** Checks the inbox options once, at setup. */
export function inboxSettings(options: InboxOptions): InboxSettings {
  if (typeof options !== 'object' || options === null) throw new TypeError('svc-webhooks: `inbox` must be an options object');
  for (const key of Object.keys(options)) if (!KNOWN.has(key)) throw new TypeError(`svc-webhooks: unknown inbox option \`${key}\``);
  if (typeof options.url !== 'string' || !/^rediss?:\/\//.test(options.url)) throw new TypeError('svc-webhooks: inbox `url` must be a redis:// or rediss:// URL');
  const prefix = options.prefix ?? 'svc-webhooks';
  if (typeof prefix !== 'string' || prefix === '' || prefix.includes(':')) throw new TypeError('svc-webhooks: inbox `prefix` must be a non-empty string without ":"');
  const retryForMs = number(options.retryFor, DAY_MS, 'retryFor', 0, 30 * DAY_MS);
  const retryDelayMs = number(options.retryDelay, 1000, 'retryDelay', 1, DAY_MS);
  // A first delay longer than the default maximum is taken as it is, not cut down to the maximum.
  const maxRetryDelayMs = number(options.maxRetryDelay, Math.max(60 * 60 * 1000, retryDelayMs), 'maxRetryDelay', retryDelayMs, DAY_MS);
  return {
    url: options.url,
    prefix,
    retryForMs,
    retryDelayMs,
    maxRetryDelayMs,
    attempts: attemptsWithin(retryForMs, retryDelayMs, maxRetryDelayMs),
    ordered: ordered(options.ordered),
    gapWaitMs: number(options.gapWaitMs, 2 * 60 * 1000, 'gapWaitMs', 0, DAY_MS),
    keepProcessedMs: number(options.keepProcessedFor, DEFAULT_RETENTION_MS, 'keepProcessedFor', 0, 30 * DAY_MS),
    enqueueTimeoutMs: number(options.enqueueTimeoutMs, 2000, 'enqueueTimeoutMs', 1, 9000),
  };
}

/** The delay before retry number `retry` (1 for the first): doubling from `first`, at most `longest`. */
export function retryDelay(retry: number, first: number, longest: number): number {
  return Math.min(first * 2 ** Math.min(retry - 1, 40), longest);
}

/** Runs that fit in the window: the first run, then retries until their delays add up to `windowMs`. */
export function attemptsWithin(windowMs: number, first: number, longest: number): number {
  let runs = 1;
  for (let waited = 0; waited < windowMs; runs++) waited += retryDelay(runs, first, longest);
  return runs;
}

function ordered(value: unknown): boolean | ReadonlySet<string> {
  if (value === undefined || typeof value === 'boolean') return value ?? false;
  if (Array.isArray(value) && value.every((t) => typeof t === 'string' && t !== '')) return new Set(value as string[]);
  throw new TypeError('svc-webhooks: inbox `ordered` must be a boolean or a list of board event types');
}

/** Inbox options are named as such in errors: `inbox.retryFor`. */
function number(value: unknown, fallback: number, name: string, min: number, max: number): number {
  return optionNumber(value, fallback, `inbox.${name}`, min, max);
}
