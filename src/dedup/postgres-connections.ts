import type { SqlClient, SqlResult } from '../internal/connections/sql-client';
import { isConnectionFailure } from './postgres-failure';

/** A connection lent by a pool (a node-postgres `PoolClient`). */
export interface PooledSqlClient extends SqlClient {
  /** Gives it back; `true` (or an error) discards it instead. */
  release(destroy?: boolean | Error): void;
  on?(event: 'error', listener: (err: Error) => void): unknown;
  off?(event: 'error', listener: (err: Error) => void): unknown;
}

/** The part of a node-postgres `Pool` the store uses. Any pool with these methods works. */
export interface PostgresPool {
  connect(): Promise<PooledSqlClient>;
  end?(): Promise<void>;
}

/** Listens to a lent connection's errors, which the statement on it reports. */
export function ignore(): void {}

/** A statement sent on `client`; a query that throws at once fails like one that rejects. */
export function sent(client: PooledSqlClient, text: string, values?: unknown[]): Promise<SqlResult> {
  return new Promise<SqlResult>((resolve) => resolve(values === undefined ? client.query(text) : client.query(text, values)));
}

/** Gives a connection back to the pool, or (`destroy`) discards it. */
export function giveBack(client: PooledSqlClient, destroy: boolean): void {
  client.off?.('error', ignore);
  try {
    client.release(destroy);
  } catch {
    // Already released (a handler gave its transaction client back itself).
  }
}

/**
 * A statement that timed out may still be running on its connection. Discarding the connection
 * would make a server that was only slow (or briefly stopped) face a new connection for every
 * caller at once, each slower than the last, a storm that outlasts the slowness itself: the
 * connection is kept out of the pool until the statement settles, then cleaned up (`cleanUp`: a
 * transaction's ROLLBACK) and given back. It is discarded instead if the statement failed in a way
 * `discards` picks (a lost connection, by default), if the clean-up failed, or if all that has not
 * ended within `boundMs`.
 */
export function giveBackWhenSettled(
  client: PooledSqlClient,
  query: Promise<unknown>,
  boundMs: number,
  { cleanUp, discards = isConnectionFailure }: { cleanUp?: () => Promise<unknown>; discards?: (err: unknown) => boolean } = {},
): void {
  let settled = false;
  const settle = (destroy: boolean) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    giveBack(client, destroy);
  };
  const timer = setTimeout(() => settle(true), boundMs);
  timer.unref();
  query
    .then(
      () => false,
      (err: unknown) => discards(err),
    )
    .then((lost) => {
      if (lost || cleanUp === undefined || settled) return settle(lost);
      cleanUp().then(
        () => settle(false),
        () => settle(true),
      );
    });
}

/**
 * A pool of the store's own, for `connectionString`. Callers give up on a connection at their
 * deadline (and the store hands a late one back), but the attempt itself runs on for up to
 * `connectBoundMs`: aborting it at the deadline would make a server slow to open connections (just
 * restarted, cold, loaded) face a new attempt from every caller, each aborted in turn, a storm that
 * keeps it from ever catching up.
 */
export function createPool(connectionString: string, connectBoundMs: number): PostgresPool {
  // An optional peer dependency: only users of `connectionString` need pg installed.
  const { Pool } = require('pg') as typeof import('pg');
  const pool = new Pool({ connectionString, connectionTimeoutMillis: connectBoundMs, keepAlive: true });
  // An idle connection that the server drops is an error event; the next statement reconnects or fails closed (503).
  pool.on('error', () => undefined);
  return pool;
}
