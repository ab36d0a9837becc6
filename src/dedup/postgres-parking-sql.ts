/**
 * The SQL of the PostgreSQL store's parking lot: two tables beside the store's, named after it
 * (`<table>_failures` and `<table>_parked`, in the same schema), their migration and the statements
 * on them. Times the receiver gives (`at`, `parkedAt`, …) are kept as given, in ms since the epoch;
 * only the expiry of a row uses the database's clock. Text that may hold anything (the id, the
 * event's kind, an error, the headers) is kept as JSON text, so a NUL or a lone surrogate survives.
 */

/** A name the store checked (quoteTable), with a suffix of letters and underscores: quoted as it is. */
function quoted(table: string): string {
  return table
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

/** A table name made from the store's: the schema kept, the name cut so that the suffix fits 63 characters. */
function beside(table: string, suffix: string): string {
  const parts = table.split('.');
  const name = parts.pop()!;
  return [...parts, name.slice(0, 63 - suffix.length) + suffix].join('.');
}

/** The lot's two tables for the store's `table`: failures and parked deliveries. */
export function parkingTables(table: string): { readonly failures: string; readonly parked: string } {
  return { failures: beside(table, '_failures'), parked: beside(table, '_parked') };
}

/** The part of the store's migration that creates the lot's tables; safe to apply again. */
export function parkingMigrationSql(table: string): string {
  const { failures, parked } = parkingTables(table);
  const index = `"${failures.split('.').pop()!.slice(0, 48)}_expires_at_idx"`;
  const order = `"${parked.split('.').pop()!.slice(0, 49)}_parked_at_idx"`;
  return `-- The failed attempts of deliveries, kept for the store's retention after the last one.
CREATE TABLE IF NOT EXISTS ${quoted(failures)} (
  -- The delivery's row key, as in the store's table.
  id text PRIMARY KEY,
  -- When it first failed, in ms since the epoch.
  first_failed_at double precision NOT NULL,
  attempts integer NOT NULL,
  -- The last error's message, as JSON text.
  last_error text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${index} ON ${quoted(failures)} (expires_at);
-- Parked deliveries (parkAfterMs, schemaPolicy 'park'), kept for parkedRetentionMs for a replay.
CREATE TABLE IF NOT EXISTS ${quoted(parked)} (
  -- The delivery's row key, as in the store's table.
  id text PRIMARY KEY,
  -- The delivery id itself, as JSON text.
  delivery text NOT NULL,
  webhook text NOT NULL,
  -- The event's type or kind, as JSON text.
  kind text NOT NULL,
  reason text NOT NULL,
  -- Times in ms since the epoch; first_failed_at and replayed_at may be NULL.
  parked_at double precision NOT NULL,
  first_failed_at double precision,
  attempts integer NOT NULL,
  last_error text NOT NULL,
  -- svc's headers, a JSON object.
  headers text NOT NULL,
  body bytea NOT NULL,
  replayed_at double precision,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${order} ON ${quoted(parked)} (parked_at, id);
`;
}

export interface ParkingStatements {
  /** $1 id, $2 at, $3 error, $4 retention ms. */
  readonly noteFailure: string;
  /** $1 id -> { first_failed_at, attempts, last_error } while kept. */
  readonly failure: string;
  /** $1 … $12 the row (PARKED_COLUMNS), $13 retention ms, $14 maxParked -> a row when kept. */
  readonly park: string;
  /** $1 the most rows (NULL: all) -> the parked rows, oldest parked first. */
  readonly list: string;
  /** $1 id -> the parked row. */
  readonly get: string;
  /** $1 id -> a row `{ kept }` when there was one; `kept` when it had not expired. */
  readonly drop: string;
  /** Each $1 batch size: deletes expired rows of one table. */
  readonly prune: readonly string[];
}

/** The columns of a parked row, in the order of `park`'s parameters, with their types. */
const PARKED_TYPES = {
  id: 'text',
  delivery: 'text',
  webhook: 'text',
  kind: 'text',
  reason: 'text',
  parked_at: 'float8',
  first_failed_at: 'float8',
  attempts: 'int',
  last_error: 'text',
  headers: 'text',
  body: 'bytea',
  replayed_at: 'float8',
};
export const PARKED_COLUMNS = Object.keys(PARKED_TYPES);

export function parkingStatements(table: string): ParkingStatements {
  const names = parkingTables(table);
  const f = quoted(names.failures);
  const p = quoted(names.parked);
  const ms = (param: string) => `clock_timestamp() + ${param}::float8 * interval '1 millisecond'`;
  const live = `expires_at > clock_timestamp()`;
  const columns = PARKED_COLUMNS.join(', ');
  const values = Object.values(PARKED_TYPES)
    .map((type, i) => `$${i + 1}::${type}`)
    .join(', ');
  const prune = (t: string) => `WITH expired AS (
      SELECT id FROM ${t} WHERE expires_at < clock_timestamp() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
    DELETE FROM ${t} AS d USING expired WHERE d.id = expired.id`;
  return {
    // An expired row not yet pruned counts as none: its first time and count start again.
    noteFailure: `INSERT INTO ${f} AS f (id, first_failed_at, attempts, last_error, expires_at) VALUES ($1, $2, 1, $3, ${ms('$4')})
    ON CONFLICT (id) DO UPDATE SET first_failed_at = CASE WHEN f.${live} THEN f.first_failed_at ELSE EXCLUDED.first_failed_at END,
      attempts = CASE WHEN f.${live} THEN f.attempts + 1 ELSE 1 END,
      last_error = EXCLUDED.last_error, expires_at = EXCLUDED.expires_at`,
    failure: `SELECT first_failed_at, attempts, last_error FROM ${f} WHERE id = $1 AND ${live}`,
    // A parked id is replaced; a new one only while fewer than maxParked are kept. (Parks of new
    // ids at the same moment may each see room for one: the bound is kept within them.)
    park: `INSERT INTO ${p} AS p (${columns}, expires_at)
    SELECT ${values}, ${ms('$13')}
    WHERE EXISTS (SELECT 1 FROM ${p} WHERE id = $1 AND ${live}) OR (SELECT count(*) FROM ${p} WHERE ${live}) < $14
    ON CONFLICT (id) DO UPDATE SET ${PARKED_COLUMNS.slice(1)
      .map((c) => `${c} = EXCLUDED.${c}`)
      .join(', ')}, expires_at = EXCLUDED.expires_at
    RETURNING 1`,
    list: `SELECT ${columns} FROM ${p} WHERE ${live} ORDER BY parked_at, id LIMIT $1`,
    get: `SELECT ${columns} FROM ${p} WHERE id = $1 AND ${live}`,
    drop: `DELETE FROM ${p} WHERE id = $1 RETURNING ${live} AS kept`,
    prune: [prune(f), prune(p)],
  };
}
