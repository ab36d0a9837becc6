import { randomUUID } from 'node:crypto';
import type { WebhookLogger } from '../internal/logging/logger';
import { SvcWebhookError } from '../errors';
import { safeError } from '../internal/logging/safe-error';
import { storeRefusal } from './store-refusal';
import { readOptions } from '../internal/checks/option-table';
import type { ClaimResult, DeliveryStore } from './delivery-store';
import type { ParkingLot } from './parking-lot';
import { PostgresParking } from './postgres-parking';
import { parkingStatements } from './postgres-parking-sql';
import { POSTGRES_STORE_OPTIONS } from './store-options';
import { isConnectionFailure, StoreTimeoutError, withTimeout } from './postgres-failure';
import type { SqlClient, SqlResult } from '../internal/connections/sql-client';
import { CLAIM_LOST_MARKER, quoteTable, rowKey, statements, type Statements } from './postgres-sql';
import { createPool, giveBack, giveBackWhenSettled, ignore, sent, type PooledSqlClient, type PostgresPool } from './postgres-connections';

export type { PooledSqlClient, PostgresPool } from './postgres-connections';

/** Options of `postgresStore(options)`; docs/options.md lists them with their bounds. */
export interface PostgresStoreOptions {
  /** A node-postgres `Pool`. The store does not close it; give it an `error` listener (pg requires one for idle clients). */
  pool?: PostgresPool;
  /** A connection string (`postgres://user@host/db`): the store creates a pool of its own, and closes it on `close()`. */
  connectionString?: string;
  /** The table made by the migration (`svc-webhooks postgres migrate`): `name` or `schema.name`. Default `svc_webhook_deliveries`. */
  table?: string;
  /** How long handled ids are kept, in ms. Default: one day plus an hour. */
  retentionMs?: number;
  /** Longest wait for a connection plus one store statement, in ms; past it the delivery fails closed (503). Default 1000. */
  commandTimeoutMs?: number;
  /** How often expired rows are deleted, in ms (in small batches that skip rows in use). Default 10 minutes. */
  pruneIntervalMs?: number;
  /** How long a parked delivery is kept for a replay, in ms. Default 7 days. */
  parkedRetentionMs?: number;
  /** The most deliveries parked at once; past it a delivery is not parked (and an error is logged). Default 10,000. */
  maxParked?: number;
  /** Where failed prunes are reported. */
  logger?: Pick<WebhookLogger, 'warn'>;
}

/** A parameterised statement, in node-postgres's QueryConfig shape: `client.query(statement)` runs it. */
export interface DoneMarkStatement {
  readonly text: string;
  readonly values: unknown[];
}

const DONE: ClaimResult = Object.freeze({ state: 'done' });
const BUSY: ClaimResult = Object.freeze({ state: 'busy' });
const PRUNE_BATCH = 1000;
const UNDEFINED_TABLE = '42P01';
// A connection whose statement timed out is kept this many command timeouts to settle; the store's own pool's connection attempts run as long.
const SETTLE_FACTOR = 10;

/**
 * A de-dup store in PostgreSQL, shared by every receiver that uses the same table. Beside the
 * claim, commit and release of every store, it runs a handler's database work in a transaction
 * that records the delivery as done before it commits (`ctx.transaction`), so that work happens
 * exactly once even when the process dies at any point.
 */
export class PostgresStore implements DeliveryStore {
  readonly retentionMs: number;
  /** The quoted table name, as the statements use it. */
  readonly table: string;
  /** Failures and parked deliveries, in the tables `<table>_failures` and `<table>_parked` (docs/deduplication.md). */
  readonly parking: ParkingLot;
  private readonly pool: PostgresPool;
  private readonly ownsPool: boolean;
  private readonly timeoutMs: number;
  private readonly sql: Statements;
  // The store's table first, then the lot's.
  private readonly prunes: readonly string[];
  private readonly logger: Pick<WebhookLogger, 'warn'> | undefined;
  private readonly pruneTimer: NodeJS.Timeout;
  private pruning: Promise<number> | undefined;
  // Deliveries whose transaction recorded them as done: the receiver's commit that follows has nothing left to write.
  private readonly markedInTransaction = new Set<string>();

  constructor(options: PostgresStoreOptions) {
    // Stryker disable next-line ObjectLiteral,StringLiteral: the factory's name reaches only the messages of setup errors (test/mutation/EQUIVALENT.postgres.md)
    const read = readOptions(POSTGRES_STORE_OPTIONS, options, { factory: 'postgresStore' });
    if ((read.pool === undefined) === (read.connectionString === undefined)) {
      throw new TypeError('svc-webhooks: postgresStore needs exactly one of `pool` or `connectionString`');
    }
    this.timeoutMs = read.commandTimeoutMs;
    this.retentionMs = read.retentionMs;
    this.table = quoteTable(read.table);
    this.sql = statements(read.table);
    this.prunes = [this.sql.prune, ...parkingStatements(read.table).prune];
    const { table, retentionMs, parkedRetentionMs, maxParked } = read;
    this.parking = new PostgresParking({
      statement: (what, text, values) => this.statement(what, text, values),
      table,
      retentionMs,
      parkedRetentionMs,
      maxParked,
      onMissingTables: () =>
        read.logger?.warn(
          { table },
          'the parking tables of the PostgreSQL store do not exist: nothing is parked until the migration is applied again (npx svc-webhooks postgres migrate)',
        ),
    });
    this.logger = read.logger;
    this.ownsPool = read.pool === undefined;
    this.pool = (read.pool as PostgresPool | undefined) ?? createPool(read.connectionString!, this.timeoutMs * SETTLE_FACTOR);
    this.pruneTimer = setInterval(() => void this.pruneQuietly(), read.pruneIntervalMs);
    this.pruneTimer.unref();
  }

  async claim(id: string, leaseMs: number): Promise<ClaimResult> {
    const token = randomUUID();
    const { rows } = await this.statement('claim', this.sql.claim, [rowKey(id), token, Math.ceil(leaseMs)]);
    const row = rows[0] as { claimed: boolean; done: boolean } | undefined;
    if (row?.claimed === true) return { state: 'claimed', token };
    return row?.done === true ? DONE : BUSY;
  }

  /** Records the delivery as done unless another attempt holds it now; nothing to do after `transaction` did it. */
  async commit(id: string, token: string): Promise<void> {
    const key = rowKey(id);
    if (this.markedInTransaction.delete(markKey(key, token))) return;
    await this.statement('commit', this.sql.commit, [key, token, Math.ceil(this.retentionMs)]);
  }

  async release(id: string, token: string): Promise<void> {
    const key = rowKey(id);
    // After a transaction that committed, the row is done and holds no token: nothing to release.
    if (this.markedInTransaction.delete(markKey(key, token))) return;
    await this.statement('release', this.sql.release, [key, token]);
  }

  async extend(id: string, token: string, leaseMs: number): Promise<void> {
    await this.statement('extend', this.sql.extend, [rowKey(id), token, Math.ceil(leaseMs)]);
  }

  /**
   * Runs `work` in a transaction on the store's pool and records the delivery as done in that same
   * transaction, just before COMMIT: the work and the record persist together or not at all. The
   * record is token-checked: when this attempt's claim lapsed and another attempt took the delivery,
   * the transaction is rolled back and the call fails with `delivery_in_progress`. A database that
   * cannot be reached fails it with `store_unavailable`; whatever `work` throws is thrown as is.
   */
  async transaction<T>(id: string, token: string, work: (client: SqlClient) => T | PromiseLike<T>): Promise<T> {
    const key = rowKey(id);
    const client = await this.connect(performance.now() + this.timeoutMs).catch((err: unknown) => {
      throw translate(err);
    });
    // The store's statement on the connection now: what a timeout leaves running there.
    let running: Promise<unknown> = Promise.resolve();
    const step = (what: string, ...query: [text: string, values?: unknown[]]) => {
      running = sent(client, ...query);
      return this.timed(running, what);
    };
    try {
      await step('BEGIN', 'BEGIN');
      const result = await work(client);
      // Stryker disable next-line StringLiteral: the step's name reaches only a timeout's message (test/mutation/EQUIVALENT.postgres.md)
      await step('done mark', this.sql.mark, [key, token, Math.ceil(this.retentionMs)]);
      await step('COMMIT', 'COMMIT');
      this.markedInTransaction.add(markKey(key, token));
      giveBack(client, false);
      return result;
    } catch (err) {
      if (err instanceof StoreTimeoutError) {
        // BEGIN, the mark or COMMIT may still run (a slow or stopped server): the connection is
        // kept aside until it ends, then rolled back (a no-op after a COMMIT that went through).
        giveBackWhenSettled(client, running, this.timeoutMs * SETTLE_FACTOR, { cleanUp: () => sent(client, 'ROLLBACK') });
      } else if (isConnectionFailure(err)) {
        // The server rolls back what it held.
        giveBack(client, true);
      } else {
        await this.rollBack(client);
      }
      throw translate(err);
    }
  }

  /**
   * The statement that records a delivery as done inside a transaction of your own (the recipe for
   * Prisma, Drizzle or Kysely); it fails, rolling that transaction back, when the claim was lost.
   */
  doneMark(id: string, token: string): DoneMarkStatement {
    return { text: this.sql.mark, values: [rowKey(id), token, Math.ceil(this.retentionMs)] };
  }

  /**
   * Deletes the rows whose lease or retention ended (and the parking lot's expired rows), in batches
   * of 1000 that skip rows a delivery has locked. Runs every `pruneIntervalMs` by itself; resolves
   * to the number of rows deleted.
   */
  prune(): Promise<number> {
    this.pruning ??= this.pruneBatches().finally(() => {
      this.pruning = undefined;
    });
    return this.pruning;
  }

  async close(): Promise<void> {
    clearInterval(this.pruneTimer);
    this.markedInTransaction.clear();
    // Stryker disable next-line OptionalChaining: a pool the store made is a pg Pool, which has end (test/mutation/EQUIVALENT.postgres.md)
    if (this.ownsPool) await this.pool.end?.();
  }

  private async pruneBatches(): Promise<number> {
    let total = 0;
    for (const prune of this.prunes) {
      for (;;) {
        const { rowCount } = await this.statement('prune', prune, [PRUNE_BATCH]);
        total += rowCount ?? 0;
        if ((rowCount ?? 0) < PRUNE_BATCH) break;
        // Let deliveries through between batches.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return total;
  }

  private async pruneQuietly(): Promise<void> {
    try {
      await this.prune();
    } catch (err) {
      this.logger?.warn({ err: safeError(err) }, 'could not prune expired delivery ids from the postgres store; will try again');
    }
  }

  /** Rolls back a failed transaction and gives its connection back; discards it if the ROLLBACK fails. */
  private async rollBack(client: PooledSqlClient): Promise<void> {
    const rollback = sent(client, 'ROLLBACK');
    try {
      await this.timed(rollback, 'ROLLBACK');
      giveBack(client, false);
    } catch (err) {
      // Stryker disable next-line ConditionalExpression: after a ROLLBACK that failed on its own, both discard the connection (test/mutation/EQUIVALENT.postgres.md)
      if (err instanceof StoreTimeoutError) giveBackWhenSettled(client, rollback, this.timeoutMs * SETTLE_FACTOR, { discards: () => true });
      else giveBack(client, true);
    }
  }

  /** One statement on a pooled connection, connection wait included, within the command timeout. */
  private async statement(what: string, text: string, values: unknown[]): Promise<SqlResult> {
    const deadline = performance.now() + this.timeoutMs;
    const client = await this.connect(deadline);
    const query = sent(client, text, values);
    try {
      const answer = await withTimeout(query, Math.max(1, deadline - performance.now()), what);
      giveBack(client, false);
      return answer;
    } catch (err) {
      // At once after the statement's own failure; after a timeout, once it has ended.
      giveBackWhenSettled(client, query, this.timeoutMs * SETTLE_FACTOR);
      throw explain(err, this.table);
    }
  }

  private async connect(deadline: number): Promise<PooledSqlClient> {
    // A connection that arrives after its caller gave up goes straight back to the pool.
    const client = await withTimeout(this.pool.connect(), Math.max(1, deadline - performance.now()), 'connect', (late) => giveBack(late, false));
    // A checked-out client whose server goes away emits 'error'; unheard, it would end the process.
    // The statement or transaction using it fails on its own.
    client.on?.('error', ignore);
    return client;
  }

  private timed<T>(work: Promise<T>, what: string): Promise<T> {
    return withTimeout(work, this.timeoutMs, what);
  }
}

function markKey(key: string, token: string): string {
  return `${key}\0${token}`;
}

/** The store's own statements: a missing table is a setup step left out, said plainly. */
function explain(err: unknown, table: string): unknown {
  if ((err as { code?: unknown } | null)?.code !== UNDEFINED_TABLE) return err;
  return new Error(`svc-webhooks: the table ${table} does not exist; apply the migration first (npx svc-webhooks postgres migrate)`, { cause: err });
}

/** A transaction's failure as the receiver should answer it. */
function translate(err: unknown): unknown {
  if (isConnectionFailure(err)) {
    return storeRefusal(new SvcWebhookError('store_unavailable', 'the de-duplication store is unavailable; retry later', { cause: err, retryAfter: 5 }));
  }
  const message = (err as { message?: unknown } | null)?.message;
  if (typeof message === 'string' && message.includes(CLAIM_LOST_MARKER)) {
    return storeRefusal(
      new SvcWebhookError('delivery_in_progress', 'another attempt holds this delivery now; this attempt rolled its transaction back', {
        cause: err,
        retryAfter: 5,
      }),
    );
  }
  return err;
}

/** The PostgreSQL de-dup store: `store: postgresStore({ connectionString: process.env.DATABASE_URL })`. */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  return new PostgresStore(options);
}
