import { DAY_MS, DEFAULT_RETENTION_MS } from '../internal/delivery/svc-limits';
import { customOption, kindOf, numberOption, readOptions, stringOption } from '../internal/checks/option-table';
import { clusterSeeds } from '../internal/connections/redis-client';

/**
 * A Redis Cluster for the inbox (docs/redis-cluster.md): its seed nodes, and how many replicas must
 * hold a delivery before the receiver answers 2xx.
 */
export interface InboxCluster {
  /** Seed node URLs: `redis://host:port` (`rediss://` for TLS), credentials in them; the others are found. */
  readonly cluster: readonly string[];
  /**
   * Replicas that must have a delivery (Redis `WAIT`) before it is answered 2xx, so that a master
   * killed right after cannot take it along; within `enqueueTimeoutMs`, else 503. Default 1; 0 for a
   * cluster without replicas.
   */
  readonly waitForReplicas?: number;
}

/** The inbox's Redis: one server's `redis://` URL, or a cluster. */
export type InboxConnection = string | InboxCluster;

/** `inbox`: acknowledge now, process later, in a BullMQ queue on Redis. */
export interface InboxOptions {
  /**
   * The Redis the queues live in: a `redis://host:port/db` URL (the de-dup store's Redis can serve
   * both), or a Redis Cluster, `{ cluster: ['redis://host:port', …] }`.
   */
  connection: InboxConnection;
  /** Prefix of the queues' Redis keys, so several applications can share one Redis. Default `svc-webhooks` (`{svc-webhooks}` on a cluster, which must have a hash tag). */
  prefix?: string;
  /** How long a failing delivery is retried before it becomes a dead letter, in ms. Default: a day, as long as svc retries. */
  retryForMs?: number;
  /** The first retry's delay in ms; each next one doubles, up to `maxRetryDelayMs`. Default 1000. */
  retryDelayMs?: number;
  /** The longest delay between two retries, in ms. Default one hour (svc's own longest), or `retryDelayMs` when that is longer. */
  maxRetryDelayMs?: number;
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
  keepProcessedMs?: number;
  /** Longest wait for Redis to take a delivery, in ms; past it the delivery is refused with 503 and retried by svc. Default 2000. */
  enqueueTimeoutMs?: number;
}

export interface InboxSettings {
  /** A URL, or a cluster whose `waitForReplicas` is filled in. */
  readonly connection: string | Required<InboxCluster>;
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

const HOUR_MS = 60 * 60 * 1000;

/** The declaration of every `inbox` option (docs/options.md is made from it). */
export const INBOX_OPTIONS = {
  connection: customOption<string | Required<InboxCluster> | undefined>({
    doc: "The Redis the queues live in: a `redis://` or `rediss://` URL (the de-dup store's Redis can serve both), or a Redis Cluster, `{ cluster: [seed URLs], waitForReplicas }` (docs/redis-cluster.md).",
    type: 'string | { cluster: string[]; waitForReplicas?: number }',
    bounds: 'a redis:// or rediss:// URL, or a cluster (required)',
    read: connectionOf,
  }),
  prefix: stringOption({
    doc: "Prefix of the queues' Redis keys, so that several applications can share one Redis.",
    default: undefined,
    defaultText: '`svc-webhooks`; `{svc-webhooks}` on a cluster',
    bounds: 'non-empty, without `:`; with a hash tag (`{…}`) on a cluster',
    check(value, name) {
      if (value === '' || value.includes(':')) throw new TypeError(`svc-webhooks: \`${name}\` must be a non-empty string without ":"`);
    },
  }),
  retryForMs: numberOption({
    doc: 'How long a failing delivery is retried before it becomes a dead letter (svc retries for a day).',
    unit: 'ms',
    default: DAY_MS,
    min: 0,
    max: 30 * DAY_MS,
    integer: false,
  }),
  retryDelayMs: numberOption({
    doc: "The first retry's delay; each next one doubles, up to `maxRetryDelayMs`.",
    unit: 'ms',
    default: 1000,
    min: 1,
    max: DAY_MS,
    integer: false,
  }),
  maxRetryDelayMs: numberOption({
    doc: 'The longest delay between two retries.',
    unit: 'ms',
    default: undefined,
    defaultText: "one hour (svc's own longest), or `retryDelayMs` when that is longer",
    min: 1,
    max: DAY_MS,
    integer: false,
  }),
  ordered: customOption<boolean | ReadonlySet<string>>({
    doc: 'Board order: `true` hands every board event but `ping` to the handlers in `sequence` order, one at a time per board; a list of event types orders those types only.',
    type: 'boolean | string[]',
    defaultText: 'false',
    read(value, name) {
      if (value === undefined || typeof value === 'boolean') return value ?? false;
      if (Array.isArray(value) && value.every((t) => typeof t === 'string' && t !== '')) return new Set(value as string[]);
      throw new TypeError(`svc-webhooks: \`${name}\` must be a boolean or a list of board event types; got ${kindOf(value)}`);
    },
  }),
  gapWaitMs: numberOption({
    doc: 'How long an ordered event waits for a missing predecessor, from when a worker first takes it up, before it is handled with `ctx.gap`.',
    unit: 'ms',
    default: 2 * 60 * 1000,
    min: 0,
    max: DAY_MS,
    integer: false,
  }),
  keepProcessedMs: numberOption({
    doc: "How long a processed delivery's job is kept: a repeat enqueued in that time (after a receiver crashed between enqueueing and recording it) finds it and is not run again.",
    unit: 'ms',
    default: DEFAULT_RETENTION_MS,
    defaultText: `${DEFAULT_RETENTION_MS} (a day and an hour, as long as the de-dup store remembers ids)`,
    min: 0,
    max: 30 * DAY_MS,
    integer: false,
  }),
  enqueueTimeoutMs: numberOption({
    doc: 'Longest wait for Redis to take a delivery; past it the delivery is refused with 503 and retried by svc.',
    unit: 'ms',
    default: 2000,
    min: 1,
    max: 9000,
    integer: false,
  }),
};

const RENAMED = {
  url: 'connection',
  retryFor: 'retryForMs',
  retryDelay: 'retryDelayMs',
  maxRetryDelay: 'maxRetryDelayMs',
  keepProcessedFor: 'keepProcessedMs',
};

/** Checks the inbox options once, at setup. */
// Stryker disable next-line StringLiteral: the factory's name reaches only the refusals' messages (test/mutation/EQUIVALENT.inbox-rest.md)
export function inboxSettings(options: unknown, factory = 'svcBoardWebhook'): InboxSettings {
  const read = readOptions(INBOX_OPTIONS, options, { factory, prefix: 'inbox.', renamed: RENAMED });
  if (read.connection === undefined) throw new TypeError(`svc-webhooks: \`inbox.connection\` is required: the redis:// URL of the Redis the queues live in`);
  // A first delay longer than the default maximum is taken as it is, not cut down to the maximum.
  const maxRetryDelayMs = read.maxRetryDelayMs ?? Math.max(HOUR_MS, read.retryDelayMs);
  if (maxRetryDelayMs < read.retryDelayMs) {
    throw new RangeError(`svc-webhooks: \`inbox.maxRetryDelayMs\` (${maxRetryDelayMs}) must be at least \`inbox.retryDelayMs\` (${read.retryDelayMs})`);
  }
  const { connection } = read;
  const onCluster = typeof connection !== 'string';
  const prefix = read.prefix ?? (onCluster ? '{svc-webhooks}' : 'svc-webhooks');
  // Every key of a queue (and of board order, whose scripts read its jobs) must hash to one slot.
  if (onCluster && !hasHashTag(prefix)) {
    throw new TypeError(
      "svc-webhooks: `inbox.prefix` must have a hash tag on a cluster, such as `{svc-webhooks}`, so that all of a queue's keys are in one slot",
    );
  }
  return {
    ...read,
    connection,
    prefix,
    maxRetryDelayMs,
    attempts: attemptsWithin(read.retryForMs, read.retryDelayMs, maxRetryDelayMs),
  };
}

function connectionOf(value: unknown, name: string): string | Required<InboxCluster> | undefined {
  if (value === undefined || (typeof value === 'string' && /^rediss?:\/\//.test(value))) return value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(
      `svc-webhooks: \`${name}\` must be a redis:// or rediss:// URL, or { cluster: [seed URLs] }; got ${kindOf(value)}${typeof value === 'string' ? ' that is not one' : ''}`,
    );
  }
  const given = value as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (key !== 'cluster' && key !== 'waitForReplicas')
      throw new TypeError(`svc-webhooks: \`${name}\` has no option \`${key}\`; a cluster takes \`cluster\` and \`waitForReplicas\``);
  }
  const cluster = clusterSeeds(given.cluster, `${name}.cluster`);
  const waitForReplicas = numberOption({ doc: '', unit: 'count', default: 1, min: 0, max: 16 }).read(given.waitForReplicas, `${name}.waitForReplicas`);
  return { cluster, waitForReplicas };
}

/** Whether Redis Cluster would hash a key that starts with `prefix` by a part of `prefix` (its first `{…}`, not empty). */
function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  const close = open < 0 ? -1 : prefix.indexOf('}', open + 1);
  return close > open + 1;
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

// The interface and the table name the same options.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
true satisfies Same<keyof InboxOptions, keyof typeof INBOX_OPTIONS>;
