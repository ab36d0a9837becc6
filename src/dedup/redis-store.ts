import { randomUUID } from 'node:crypto';
import { readOptions } from '../internal/checks/option-table';
import { createRedisClient } from '../internal/connections/redis-client';
import type { ClaimResult, DeliveryStore } from './delivery-store';
import type { ParkingLot } from './parking-lot';
import { RedisParking } from './redis-parking';
import { CLAIM_PREFIX, COMMIT_SCRIPT, DONE_VALUE, EXTEND_SCRIPT, RELEASE_SCRIPT, redisStoreKey } from './redis-scripts';
import { REDIS_STORE_OPTIONS } from './store-options';

export { redisStoreKey } from './redis-scripts';

/**
 * The part of a Redis client the store uses: ioredis's generic `call`. Any client with this
 * method works; `redisStore({ url })` and `redisStore({ cluster })` create an ioredis client themselves.
 */
export interface RedisCommander {
  call(command: string, ...args: Array<string | number>): Promise<unknown>;
  quit?(): Promise<unknown>;
  disconnect?(): void;
  /** ioredis's connection state: commands wait (within the timeout) until it is 'ready'. */
  readonly status?: string;
  once?(event: 'ready', listener: () => void): unknown;
}

/** Options of `redisStore(options)`; docs/options.md lists them with their bounds. */
export interface RedisStoreOptions {
  /** A connected client (an ioredis `Redis` or `Cluster`, or anything with `call`). The store does not close it. */
  client?: RedisCommander;
  /** A Redis URL (`redis://host:port/db`): the store creates an ioredis client tuned to fail fast, and closes it on `close()`. */
  url?: string;
  /**
   * A Redis Cluster, as seed node URLs (`redis://host:port`, `rediss://` for TLS; credentials in
   * them): the store creates an ioredis `Cluster` tuned to fail fast, and closes it on `close()`.
   */
  cluster?: readonly string[];
  /** Key prefix, so that several receivers can share one Redis. Default `svc-webhooks:`. */
  prefix?: string;
  /** How long handled ids are kept, in ms. Default: one day plus an hour. */
  retentionMs?: number;
  /** Longest wait for one Redis command, in ms; past it the delivery fails closed (503). Default 1000. */
  commandTimeoutMs?: number;
  /** How long a parked delivery is kept for a replay, in ms. Default 7 days. */
  parkedRetentionMs?: number;
  /** The most deliveries parked at once; past it a delivery is not parked (and an error is logged). Default 10,000. */
  maxParked?: number;
}

// ioredis states on the way to 'ready'. ('wait', a lazy client, connects on its first command.)
const CONNECTING = new Set(['connecting', 'connect', 'reconnecting']);
const DONE: ClaimResult = Object.freeze({ state: 'done' });
const BUSY: ClaimResult = Object.freeze({ state: 'busy' });

/**
 * A de-dup store shared by every instance that uses the same Redis and prefix. A claim is one
 * atomic `SET key claim:<token> NX PX lease GET`; a commit replaces it by `done` for the retention
 * window and a release deletes it, each only while it still holds our token.
 */
export class RedisStore implements DeliveryStore {
  private readonly client: RedisCommander;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  readonly retentionMs: number;
  /** Failures and parked deliveries, under the prefix (docs/deduplication.md). */
  readonly parking: ParkingLot;
  private readonly timeoutMs: number;
  private nextReady: Promise<void> | undefined;

  constructor(options: RedisStoreOptions) {
    // Stryker disable next-line ObjectLiteral,StringLiteral: the factory's name reaches only the messages of setup errors (test/mutation/EQUIVALENT.core.md)
    const read = readOptions(REDIS_STORE_OPTIONS, options, { factory: 'redisStore' });
    const given = [read.client, read.url, read.cluster].filter((v) => v !== undefined).length;
    if (given !== 1) throw new TypeError('svc-webhooks: redisStore needs exactly one of `client`, `url` or `cluster`');
    this.timeoutMs = read.commandTimeoutMs;
    this.retentionMs = read.retentionMs;
    this.prefix = read.prefix;
    this.ownsClient = read.client === undefined;
    this.client =
      (read.client as RedisCommander | undefined) ?? connect(read.url === undefined ? { cluster: read.cluster! } : { url: read.url }, this.timeoutMs);
    const { prefix, retentionMs, parkedRetentionMs, maxParked } = read;
    this.parking = new RedisParking({ command: (...args) => this.command(...args), prefix, retentionMs, parkedRetentionMs, maxParked });
  }

  async claim(id: string, leaseMs: number): Promise<ClaimResult> {
    const token = randomUUID();
    let previous: unknown;
    try {
      previous = await this.command('SET', this.key(id), CLAIM_PREFIX + token, 'PX', Math.ceil(leaseMs), 'NX', 'GET');
    } catch (err) {
      // A slow Redis may still carry out the claim later; queue its release behind it so the
      // delivery is not blocked for a whole lease by a claim nobody holds.
      this.release(id, token).catch(() => undefined);
      throw err;
    }
    if (previous === null) return { state: 'claimed', token };
    return previous === DONE_VALUE ? DONE : BUSY;
  }

  async commit(id: string, token: string): Promise<void> {
    await this.command('EVAL', COMMIT_SCRIPT, 1, this.key(id), CLAIM_PREFIX + token, DONE_VALUE, Math.ceil(this.retentionMs));
  }

  async release(id: string, token: string): Promise<void> {
    await this.command('EVAL', RELEASE_SCRIPT, 1, this.key(id), CLAIM_PREFIX + token);
  }

  async extend(id: string, token: string, leaseMs: number): Promise<void> {
    await this.command('EVAL', EXTEND_SCRIPT, 1, this.key(id), CLAIM_PREFIX + token, Math.ceil(leaseMs));
  }

  async close(): Promise<void> {
    if (!this.ownsClient) return;
    // Stryker disable next-line OptionalChaining: a client the store made is an ioredis one, which has both (test/mutation/EQUIVALENT.md)
    await this.client.quit?.().catch(() => this.client.disconnect?.());
  }

  private key(id: string): string {
    return redisStoreKey(this.prefix, id);
  }

  /** A command that answers too slowly fails, so the delivery fails closed well inside the sender's 10 s. */
  private command(...args: [string, ...Array<string | number>]): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`redis did not answer ${args[0]} within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    return Promise.race([this.connected().then(() => this.client.call(...args)), timeout]).finally(() => clearTimeout(timer));
  }

  // While (re)connecting, a command waits for the connection instead of failing at once.
  // One shared wait, so an outage does not pile up a listener per delivery.
  private connected(): Promise<void> {
    const { client } = this;
    // Only a connection under way is worth waiting for; any other state fails (or connects) at once.
    // Stryker disable next-line StringLiteral: any fallback that is no connecting state does (test/mutation/EQUIVALENT.md)
    if (!CONNECTING.has(client.status ?? '') || client.once === undefined) return Promise.resolve();
    this.nextReady ??= new Promise<void>((resolve) =>
      client.once!('ready', () => {
        this.nextReady = undefined;
        resolve();
      }),
    );
    return this.nextReady;
  }
}

function connect(target: { url: string } | { cluster: readonly string[] }, timeoutMs: number): RedisCommander {
  // Fail fast instead of queueing while disconnected: the sender retries, nothing is lost.
  const client = createRedisClient(target, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: Math.max(timeoutMs, 1000),
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
  });
  // Connection errors surface per command as 503s; without a listener they would be unhandled.
  client.on('error', () => undefined);
  return client;
}

/** The Redis de-dup store: `store: redisStore({ url: process.env.REDIS_URL })`. */
export function redisStore(options: RedisStoreOptions): RedisStore {
  return new RedisStore(options);
}
