import type { SqlResult } from '../internal/connections/sql-client';
import type { Failure, ParkedDelivery, ParkingLot } from './parking-lot';
import { parkingStatements, type ParkingStatements } from './postgres-parking-sql';
import { rowKey } from './postgres-sql';

/** Runs one statement within the store's command timeout (the store's own `statement`). */
export type PostgresStatement = (what: string, text: string, values: unknown[]) => Promise<SqlResult>;

/** What the PostgreSQL store gives its parking lot. */
export interface PostgresParkingSettings {
  readonly statement: PostgresStatement;
  /** The store's table, checked: the lot's tables are named after it. */
  readonly table: string;
  /** How long a failure row is kept after its last failure (the store's retention). */
  readonly retentionMs: number;
  readonly parkedRetentionMs: number;
  readonly maxParked: number;
  /** Told once when the lot's tables do not exist (a database migrated by an earlier version). */
  readonly onMissingTables?: () => void;
}

const UNDEFINED_TABLE = '42P01';

function isMissingTable(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | null | undefined, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++)
    if (e.code === UNDEFINED_TABLE) return true;
  return false;
}

interface FailureRow {
  first_failed_at: number;
  attempts: number;
  last_error: string;
}

interface ParkedRow {
  delivery: string;
  webhook: ParkedDelivery['webhook'];
  kind: string;
  reason: ParkedDelivery['reason'];
  parked_at: number;
  first_failed_at: number | null;
  attempts: number;
  last_error: string;
  headers: string;
  body: Uint8Array;
  replayed_at: number | null;
}

/**
 * The PostgreSQL store's parking lot, in two tables beside the store's (postgres-parking-sql.ts):
 * failures kept for the store's retention after the last one, parked deliveries for
 * `parkedRetentionMs`, at most `maxParked` of them. Rows are keyed by the store's row key of the id;
 * the store's prune timer deletes expired rows.
 */
export class PostgresParking implements ParkingLot {
  private readonly statement: PostgresStatement;
  private readonly sql: ParkingStatements;
  private readonly retentionMs: number;
  private readonly parkedRetentionMs: number;
  private readonly maxParked: number;
  private readonly onMissingTables: (() => void) | undefined;
  private missingTold = false;

  constructor(settings: PostgresParkingSettings) {
    this.statement = settings.statement;
    this.sql = parkingStatements(settings.table);
    this.retentionMs = settings.retentionMs;
    this.parkedRetentionMs = settings.parkedRetentionMs;
    this.maxParked = settings.maxParked;
    this.onMissingTables = settings.onMissingTables;
  }

  async noteFailure(id: string, at: number, error: string): Promise<void> {
    await this.statement('note failure', this.sql.noteFailure, [rowKey(id), at, JSON.stringify(error), this.retentionMs]).catch((err: unknown) =>
      this.unlessMissing(err),
    );
  }

  async failure(id: string): Promise<Failure | undefined> {
    const found = await this.statement('failure', this.sql.failure, [rowKey(id)]).catch((err: unknown) => this.unlessMissing(err));
    const row = found?.rows[0] as FailureRow | undefined;
    return row === undefined ? undefined : { firstAt: row.first_failed_at, attempts: row.attempts, lastError: JSON.parse(row.last_error) as string };
  }

  /**
   * A database migrated by an earlier version has no parking tables: every delivery would fail on
   * the failure lookup. Such a lot notes and finds no failure (told once) rather than refuse every
   * delivery: the handlers run and svc retries as before the upgrade. Any other error is thrown.
   */
  private unlessMissing(err: unknown): undefined {
    if (!isMissingTable(err)) throw err;
    if (!this.missingTold) this.onMissingTables?.();
    this.missingTold = true;
    return undefined;
  }

  async park(parked: ParkedDelivery): Promise<boolean> {
    const { body } = parked;
    const row = [
      rowKey(parked.id),
      JSON.stringify(parked.id),
      parked.webhook,
      JSON.stringify(parked.kind),
      parked.reason,
      parked.parkedAt,
      parked.firstFailedAt ?? null,
      parked.attempts,
      JSON.stringify(parked.lastError),
      JSON.stringify(parked.headers),
      Buffer.from(body.buffer, body.byteOffset, body.byteLength),
      parked.replayedAt ?? null,
    ];
    const { rows } = await this.statement('park', this.sql.park, [...row, this.parkedRetentionMs, this.maxParked]);
    return rows.length === 1;
  }

  async list(limit?: number): Promise<readonly ParkedDelivery[]> {
    const { rows } = await this.statement('list parked', this.sql.list, [limit ?? null]);
    return (rows as ParkedRow[]).map(fromRow);
  }

  async get(id: string): Promise<ParkedDelivery | undefined> {
    const { rows } = await this.statement('get parked', this.sql.get, [rowKey(id)]);
    const row = rows[0] as ParkedRow | undefined;
    return row === undefined ? undefined : fromRow(row);
  }

  async drop(id: string): Promise<boolean> {
    const { rows } = await this.statement('drop parked', this.sql.drop, [rowKey(id)]);
    return (rows[0] as { kept: boolean } | undefined)?.kept === true;
  }
}

function fromRow(row: ParkedRow): ParkedDelivery {
  return {
    id: JSON.parse(row.delivery) as string,
    webhook: row.webhook,
    kind: JSON.parse(row.kind) as string,
    reason: row.reason,
    parkedAt: row.parked_at,
    firstFailedAt: row.first_failed_at ?? undefined,
    attempts: row.attempts,
    lastError: JSON.parse(row.last_error) as string,
    headers: JSON.parse(row.headers) as Record<string, string>,
    body: new Uint8Array(row.body),
    replayedAt: row.replayed_at ?? undefined,
  };
}
