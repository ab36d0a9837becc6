import { nodeBuiltin } from '../internal/runtime/node-builtins';
import { keySegment } from '../internal/connections/redis-key';
import { hasLoneSurrogate } from '../internal/checks/unicode';
import { parkingMigrationSql } from './postgres-parking-sql';
import { sha256Hex } from './sha256';
import { DEFAULT_TABLE } from './store-options';

export { DEFAULT_TABLE };

/**
 * The PostgreSQL store's SQL: the table's migration and the statements on it. One row per delivery:
 * `token` is the claim's token while an attempt runs the handlers and NULL once the delivery is
 * done; `expires_at` is when the claim's lease ends, or when a done id may be forgotten. Times come
 * from the database's clock, so receivers with skewed clocks agree on every lease.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** `table` or `schema.table`, each part a plain identifier; quoted, so case is kept as written. */
export function quoteTable(table: string): string {
  const parts = typeof table === 'string' ? table.split('.') : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((p) => IDENTIFIER.test(p))) {
    throw new TypeError('svc-webhooks: postgres `table` must be a name like "svc_webhook_deliveries" or "schema.table" (letters, digits, underscores)');
  }
  return parts.map((p) => `"${p}"`).join('.');
}

/** The migration that creates the table and its index, and the parking lot's tables; safe to apply again. */
export function postgresMigrationSql(table: string = DEFAULT_TABLE): string {
  const name = quoteTable(table);
  const indexName = `"${table.split('.').pop()!.slice(0, 50)}_expires_at_idx"`;
  return `-- svc-webhooks: the table of the PostgreSQL de-dup store (postgresStore). Safe to apply again.
CREATE TABLE IF NOT EXISTS ${name} (
  -- The delivery id (an id longer than 200 characters, with a NUL or a lone surrogate, or that begins with "sha256", as "sha256:" or "sha256u:" and a hash).
  id text PRIMARY KEY,
  -- The claim's token while an attempt runs the handlers; NULL once the delivery is done.
  token text,
  -- When the claim's lease ends; for a done delivery, when its id may be forgotten.
  expires_at timestamptz NOT NULL
);
-- Pruning finds expired rows by it.
CREATE INDEX IF NOT EXISTS ${indexName} ON ${name} (expires_at);
${parkingMigrationSql(table)}`;
}

const MAX_KEY_LENGTH = 200;
// The row keys of hashed ids begin with it; no id kept as it is does.
const HASHED = 'sha256';

/**
 * The row key of a delivery id: the id itself, or a hash of an id that a btree index or a text
 * column could not hold (very long, or with a NUL), that the database would store as another (a
 * lone surrogate: every encoder sends U+FFFD instead), or that begins with `sha256` (it could
 * otherwise spell the row key of the long id it hashes). Every distinct id has its own row: `sha256:`
 * and the hash of the id's UTF-8, or, for an id with a lone surrogate, `sha256u:` and the hash of
 * its key segment (ASCII, one-to-one: internal/connections/redis-key.ts).
 */
export function rowKey(id: string): string {
  const lone = hasLoneSurrogate(id);
  if (id.length <= MAX_KEY_LENGTH && !id.includes('\0') && !lone && !id.startsWith(HASHED)) return id;
  return lone ? `${HASHED}u:${hexDigest(keySegment(id))}` : `${HASHED}:${hexDigest(id)}`;
}

// node:crypto's SHA-256 where the runtime has it; the same digest from the portable one elsewhere
// (this module is loaded with the store options on every runtime, the PostgreSQL store only on Node).
// Stryker disable next-line StringLiteral: without node:crypto the portable hash gives the same digest (test/mutation/EQUIVALENT.core.md)
const crypto = nodeBuiltin('node:crypto');
// Stryker disable next-line ConditionalExpression,EqualityOperator: both give the same digest (test/mutation/EQUIVALENT.core.md)
const hexDigest = crypto === undefined ? sha256Hex : (text: string) => crypto.createHash('sha256').update(text).digest('hex');

export interface Statements {
  /** $1 id, $2 token, $3 lease ms -> one row { claimed, done }. */
  readonly claim: string;
  /** $1 id, $2 token, $3 retention ms: done, unless another attempt holds the claim now. */
  readonly commit: string;
  /**
   * $1 id, $2 token, $3 retention ms: like `commit`, for inside the handler's transaction, and it
   * fails (rolling the transaction back) when this attempt's claim no longer holds the delivery.
   */
  readonly mark: string;
  /** $1 id, $2 token. */
  readonly release: string;
  /** $1 id, $2 token, $3 lease ms. */
  readonly extend: string;
  /** $1 batch size -> the number of rows deleted. */
  readonly prune: string;
}

/** The marker in the error the mark raises when the claim is lost; the store recognises it. */
export const CLAIM_LOST_MARKER = 'svc-webhooks: claim lost';

export function statements(table: string): Statements {
  const t = quoteTable(table);
  const ms = (param: string) => `clock_timestamp() + ${param}::float8 * interval '1 millisecond'`;
  // A missing row is ours to record: our lease lapsed and nobody took the delivery since. A row
  // that holds another token (or is done) belongs to another attempt, which settles it itself.
  const upsertDone = `INSERT INTO ${t} AS d (id, token, expires_at) VALUES ($1, NULL, ${ms('$3')})
    ON CONFLICT (id) DO UPDATE SET token = NULL, expires_at = EXCLUDED.expires_at WHERE d.token = $2`;
  return {
    // One round trip: insert, or take over a lapsed claim or an expired id. The second column reads
    // the row as it was when the statement began (a claim that raced us shows as busy).
    claim: `WITH claimed AS (
      INSERT INTO ${t} AS d (id, token, expires_at) VALUES ($1, $2, ${ms('$3')})
      ON CONFLICT (id) DO UPDATE SET token = EXCLUDED.token, expires_at = EXCLUDED.expires_at WHERE d.expires_at <= clock_timestamp()
      RETURNING 1)
    SELECT EXISTS (SELECT 1 FROM claimed) AS claimed,
      EXISTS (SELECT 1 FROM ${t} WHERE id = $1 AND token IS NULL AND expires_at > clock_timestamp()) AS done`,
    commit: upsertDone,
    // The error is raised by casting a message to int: plain SQL, no function in the migration.
    // The message depends on the row count, so the planner cannot fold it into an error up front.
    mark: `WITH marked AS (${upsertDone} RETURNING 1)
    SELECT CASE WHEN n = 1 THEN 1 ELSE ('${CLAIM_LOST_MARKER}: this attempt no longer holds the delivery (' || n || ' rows)')::int END AS marked
    FROM (SELECT count(*) AS n FROM marked) AS c`,
    release: `DELETE FROM ${t} WHERE id = $1 AND token = $2`,
    extend: `UPDATE ${t} SET expires_at = ${ms('$3')} WHERE id = $1 AND token = $2`,
    // Rows locked by a running delivery are skipped, never waited for.
    prune: `WITH expired AS (
      SELECT id FROM ${t} WHERE expires_at < clock_timestamp() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
    DELETE FROM ${t} AS d USING expired WHERE d.id = expired.id`,
  };
}
