import type { WebhookLogger } from '../internal/logging/logger';
import { customOption, functionOption, kindOf, numberOption, stringOption, type OptionDeclaration } from '../internal/checks/option-table';
import { clusterSeeds } from '../internal/connections/redis-client';
import { DEFAULT_RETENTION_MS } from '../internal/delivery/svc-limits';
import { PARKING_OPTIONS } from './parking-lot';

/** The longest time a timer waits (2^31 - 1 ms): longer, node's timers fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const retentionMs = numberOption({
  doc: 'How long a handled id is remembered (svc retries for a day); bot updates older than this are refused as replays.',
  unit: 'ms',
  default: DEFAULT_RETENTION_MS,
  defaultText: `${DEFAULT_RETENTION_MS} (a day and an hour)`,
  min: 0,
  minExclusive: true,
  integer: false,
});

const commandTimeoutMs = (what: string) =>
  numberOption({
    doc: `Longest wait for ${what}; past it the delivery fails closed (503 \`store_unavailable\`).`,
    unit: 'ms',
    default: 1000,
    min: 0,
    minExclusive: true,
    max: MAX_TIMER_MS,
    integer: false,
  });

/** A logger for the store's own warnings: anything with `warn`. */
const warnLogger = customOption<Pick<WebhookLogger, 'warn'> | undefined>({
  doc: "Where the store's warnings go.",
  type: '{ warn }',
  defaultText: 'none',
  read(value, name) {
    if (value !== undefined && typeof (value as { warn?: unknown } | null)?.warn !== 'function')
      throw new TypeError(`svc-webhooks: \`${name}\` must be a logger with a warn method; got ${kindOf(value)}`);
    return value as Pick<WebhookLogger, 'warn'> | undefined;
  },
});

/** A client or pool the user passes in: an object with the named methods. */
function given<T>(spec: { doc: string; type: string; methods: readonly string[]; bounds?: string }): OptionDeclaration<T | undefined> {
  return customOption<T | undefined>({
    doc: spec.doc,
    type: spec.type,
    bounds: spec.bounds ?? 'this or the next (exactly one)',
    read(value, name) {
      if (value === undefined) return undefined;
      const target = value as Record<string, unknown> | null;
      // Stryker disable next-line MethodExpression: every declared client or pool names one method, where some and every agree (test/mutation/EQUIVALENT.core.md)
      if (typeof target !== 'object' || target === null || spec.methods.some((m) => typeof target[m] !== 'function')) {
        throw new TypeError(`svc-webhooks: \`${name}\` must be ${spec.type} (with ${spec.methods.join(', ')}); got ${kindOf(value)}`);
      }
      return value as T;
    },
  });
}

/** The declaration of every `memoryStore()` option (docs/options.md is made from it). */
export const MEMORY_STORE_OPTIONS = {
  retentionMs,
  maxIds: numberOption({
    doc: 'The most ids remembered at once; past it the oldest are forgotten early, an eighth at a time, and a warning is logged.',
    unit: 'count',
    default: 1_000_000,
    min: 0,
    minExclusive: true,
    integer: false,
  }),
  now: functionOption<() => number>({ doc: 'The clock, in ms since the epoch.', type: '() => number', default: Date.now, defaultText: '`Date.now`' }),
  logger: warnLogger,
  ...PARKING_OPTIONS,
};

/** The declaration of every `redisStore()` option. */
export const REDIS_STORE_OPTIONS = {
  client: given<{ call(...args: never[]): Promise<unknown> }>({
    doc: 'A connected client (an ioredis `Redis` or `Cluster`, or anything with `call`); the store does not close it.',
    type: 'an ioredis client',
    methods: ['call'],
    bounds: 'this, `url` or `cluster` (exactly one)',
  }),
  url: stringOption({
    doc: 'A Redis URL: the store creates an ioredis client tuned to fail fast, and closes it on `close()`.',
    default: undefined,
    bounds: 'this, `client` or `cluster` (exactly one)',
  }),
  cluster: customOption<readonly string[] | undefined>({
    doc: "A Redis Cluster's seed nodes (docs/redis-cluster.md): the store creates an ioredis `Cluster` tuned to fail fast, and closes it on `close()`.",
    type: 'string[]',
    bounds: 'redis:// or rediss:// URLs; this, `client` or `url` (exactly one)',
    read: (value, name) => (value === undefined ? undefined : clusterSeeds(value, name)),
  }),
  prefix: stringOption({
    doc: 'Key prefix, so that several receivers can share one Redis. Keep hash tags (`{…}`) out of it on a cluster: they would put every id on one node.',
    default: 'svc-webhooks:',
  }),
  retentionMs,
  commandTimeoutMs: commandTimeoutMs('one Redis command'),
  ...PARKING_OPTIONS,
};

/** The declaration of every `redisRestStore()` option. */
export const REDIS_REST_STORE_OPTIONS = {
  url: stringOption({
    doc: "The REST endpoint: Upstash's `UPSTASH_REDIS_REST_URL`, or any server that takes a command as a JSON array.",
    default: undefined,
    bounds: 'an http:// or https:// URL; required',
    check(value, name) {
      let protocol: string;
      try {
        protocol = new URL(value).protocol;
        // Stryker disable next-line BlockStatement: an unset protocol is no http(s) either (test/mutation/EQUIVALENT.core.md)
      } catch {
        // Stryker disable next-line StringLiteral: any text that is no http(s) protocol is refused alike (test/mutation/EQUIVALENT.core.md)
        protocol = '';
      }
      // The value itself is not shown: a URL may carry a token in its query.
      if (protocol !== 'https:' && protocol !== 'http:') throw new TypeError(`svc-webhooks: \`${name}\` must be an http:// or https:// URL`);
    },
  }),
  token: stringOption({
    doc: "The REST token (Upstash's `UPSTASH_REDIS_REST_TOKEN`), sent as `Authorization: Bearer`; never logged or put in an error.",
    default: undefined,
    bounds: 'required',
    check(value, name) {
      if (value === '') throw new TypeError(`svc-webhooks: \`${name}\` must not be empty`);
    },
  }),
  prefix: stringOption({
    doc: 'Key prefix, as for `redisStore()`: receivers with the same prefix share their claims, over REST or not.',
    default: 'svc-webhooks:',
  }),
  retentionMs,
  commandTimeoutMs: commandTimeoutMs('one REST command'),
  fetch: functionOption<(input: string, init: RequestInit) => Promise<Response>>({
    doc: 'The `fetch` the store calls.',
    type: '(input, init) => Promise<Response>',
    defaultText: 'the global `fetch`',
  }),
};

/** The PostgreSQL store's table when none is given (here, not in postgres-sql.ts, which loads on first use). */
export const DEFAULT_TABLE = 'svc_webhook_deliveries';

/** The declaration of every `postgresStore()` option. */
export const POSTGRES_STORE_OPTIONS = {
  pool: given<{ connect(): Promise<unknown> }>({
    doc: 'A node-postgres `Pool` (give it an `error` listener); the store does not close it.',
    type: 'a pg Pool',
    methods: ['connect'],
  }),
  connectionString: stringOption({
    doc: 'A connection string: the store creates a pool of its own, and closes it on `close()`.',
    default: undefined,
    bounds: 'this or `pool` (exactly one)',
  }),
  table: stringOption({ doc: 'The table the migration made (`svc-webhooks postgres migrate`): `name` or `schema.name`.', default: DEFAULT_TABLE }),
  retentionMs,
  commandTimeoutMs: commandTimeoutMs('a connection plus one store statement'),
  pruneIntervalMs: numberOption({
    doc: 'How often expired rows are deleted (in small batches that skip rows in use).',
    unit: 'ms',
    default: 10 * 60_000,
    min: 0,
    minExclusive: true,
    max: MAX_TIMER_MS,
    integer: false,
  }),
  ...PARKING_OPTIONS,
  logger: warnLogger,
};
