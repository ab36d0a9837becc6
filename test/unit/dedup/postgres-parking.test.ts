import { DEFAULT_MAX_PARKED, DEFAULT_PARKED_RETENTION_MS, type ParkedDelivery } from '../../../src/dedup/parking-lot';
import { PostgresParking } from '../../../src/dedup/postgres-parking';
import { PARKED_COLUMNS, parkingMigrationSql, parkingStatements, parkingTables, type ParkingStatements } from '../../../src/dedup/postgres-parking-sql';
import { postgresMigrationSql, rowKey } from '../../../src/dedup/postgres-sql';
import { never, result, storeOpener } from '../../support/fake-pg';

/**
 * The PostgreSQL store's parking lot against a scripted pool, and its SQL texts: the statements it
 * sends with which parameters, and how it reads their rows. What PostgreSQL does with them is
 * tested against a real server in test/postgres/postgres-parking.test.ts.
 */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
let sql: ParkingStatements;
beforeAll(() => {
  sql = parkingStatements('svc_webhook_deliveries');
});
const open = storeOpener();

const parked: ParkedDelivery = {
  id: 'a\0b',
  webhook: 'bot',
  kind: 'message',
  reason: 'schema',
  parkedAt: 1_700_000_000_000.5,
  firstFailedAt: 1_699_000_000_000,
  attempts: 3,
  lastError: 'boom',
  headers: { 'x-svc-delivery': 'a' },
  body: new Uint8Array([0xff, 0x00, 0x41]),
  replayedAt: 1_700_000_500_000,
};
const row = {
  id: rowKey('a\0b'),
  delivery: '"a\\u0000b"',
  webhook: 'bot',
  kind: '"message"',
  reason: 'schema',
  parked_at: 1_700_000_000_000.5,
  first_failed_at: 1_699_000_000_000,
  attempts: 3,
  last_error: '"boom"',
  headers: '{"x-svc-delivery":"a"}',
  body: Buffer.from([0xff, 0x00, 0x41]),
  replayed_at: 1_700_000_500_000,
};

describe('postgres parking: the tables', () => {
  it('names them after the store table, in its schema, cut to fit 63 characters', () => {
    expect(parkingTables('svc_webhook_deliveries')).toEqual({ failures: 'svc_webhook_deliveries_failures', parked: 'svc_webhook_deliveries_parked' });
    expect(parkingTables('hooks.Deliveries')).toEqual({ failures: 'hooks.Deliveries_failures', parked: 'hooks.Deliveries_parked' });
    const long = 'a'.repeat(63);
    expect(parkingTables(long)).toEqual({ failures: `${'a'.repeat(54)}_failures`, parked: `${'a'.repeat(56)}_parked` });
  });

  it('creates both tables and their indexes if missing, quoted, within the store migration', () => {
    const text = oneLine(parkingMigrationSql('hooks.Deliveries').replace(/--.*$/gm, ''));
    expect(text).toBe(
      'CREATE TABLE IF NOT EXISTS "hooks"."Deliveries_failures" ( id text PRIMARY KEY, first_failed_at double precision NOT NULL, attempts integer NOT NULL, last_error text NOT NULL, expires_at timestamptz NOT NULL ); ' +
        'CREATE INDEX IF NOT EXISTS "Deliveries_failures_expires_at_idx" ON "hooks"."Deliveries_failures" (expires_at); ' +
        'CREATE TABLE IF NOT EXISTS "hooks"."Deliveries_parked" ( id text PRIMARY KEY, delivery text NOT NULL, webhook text NOT NULL, kind text NOT NULL, reason text NOT NULL, ' +
        'parked_at double precision NOT NULL, first_failed_at double precision, attempts integer NOT NULL, last_error text NOT NULL, headers text NOT NULL, body bytea NOT NULL, ' +
        'replayed_at double precision, expires_at timestamptz NOT NULL ); ' +
        'CREATE INDEX IF NOT EXISTS "Deliveries_parked_parked_at_idx" ON "hooks"."Deliveries_parked" (parked_at, id);',
    );
    expect(postgresMigrationSql('hooks.Deliveries').endsWith(parkingMigrationSql('hooks.Deliveries'))).toBe(true);
  });

  it('keeps the index names within 63 characters', () => {
    const text = parkingMigrationSql('a'.repeat(63));
    expect(text).toContain(`CREATE INDEX IF NOT EXISTS "${'a'.repeat(48)}_expires_at_idx"`);
    expect(text).toContain(`CREATE INDEX IF NOT EXISTS "${'a'.repeat(49)}_parked_at_idx"`);
  });
});

describe('postgres parking: the statements', () => {
  const f = '"svc_webhook_deliveries_failures"';
  const p = '"svc_webhook_deliveries_parked"';
  const later = (param: string) => `clock_timestamp() + ${param}::float8 * interval '1 millisecond'`;

  it('noteFailure: inserts, or counts on a live row and starts again on an expired one', () => {
    expect(oneLine(sql.noteFailure)).toBe(
      `INSERT INTO ${f} AS f (id, first_failed_at, attempts, last_error, expires_at) VALUES ($1, $2, 1, $3, ${later('$4')}) ` +
        'ON CONFLICT (id) DO UPDATE SET first_failed_at = CASE WHEN f.expires_at > clock_timestamp() THEN f.first_failed_at ELSE EXCLUDED.first_failed_at END, ' +
        'attempts = CASE WHEN f.expires_at > clock_timestamp() THEN f.attempts + 1 ELSE 1 END, last_error = EXCLUDED.last_error, expires_at = EXCLUDED.expires_at',
    );
  });

  it('failure, list, get and drop read live rows only', () => {
    const columns = PARKED_COLUMNS.join(', ');
    expect(PARKED_COLUMNS).toEqual([
      'id',
      'delivery',
      'webhook',
      'kind',
      'reason',
      'parked_at',
      'first_failed_at',
      'attempts',
      'last_error',
      'headers',
      'body',
      'replayed_at',
    ]);
    expect(oneLine(sql.failure)).toBe(`SELECT first_failed_at, attempts, last_error FROM ${f} WHERE id = $1 AND expires_at > clock_timestamp()`);
    expect(oneLine(sql.list)).toBe(`SELECT ${columns} FROM ${p} WHERE expires_at > clock_timestamp() ORDER BY parked_at, id LIMIT $1`);
    expect(oneLine(sql.get)).toBe(`SELECT ${columns} FROM ${p} WHERE id = $1 AND expires_at > clock_timestamp()`);
    expect(oneLine(sql.drop)).toBe(`DELETE FROM ${p} WHERE id = $1 RETURNING expires_at > clock_timestamp() AS kept`);
  });

  it('park: inserts a typed row while the id is parked or fewer than $14 are, replacing every column', () => {
    expect(oneLine(sql.park)).toBe(
      `INSERT INTO ${p} AS p (${PARKED_COLUMNS.join(', ')}, expires_at) ` +
        'SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::float8, $7::float8, $8::int, $9::text, $10::text, $11::bytea, $12::float8, ' +
        `${later('$13')} WHERE EXISTS (SELECT 1 FROM ${p} WHERE id = $1 AND expires_at > clock_timestamp()) ` +
        `OR (SELECT count(*) FROM ${p} WHERE expires_at > clock_timestamp()) < $14 ` +
        'ON CONFLICT (id) DO UPDATE SET delivery = EXCLUDED.delivery, webhook = EXCLUDED.webhook, kind = EXCLUDED.kind, reason = EXCLUDED.reason, ' +
        'parked_at = EXCLUDED.parked_at, first_failed_at = EXCLUDED.first_failed_at, attempts = EXCLUDED.attempts, last_error = EXCLUDED.last_error, ' +
        'headers = EXCLUDED.headers, body = EXCLUDED.body, replayed_at = EXCLUDED.replayed_at, expires_at = EXCLUDED.expires_at RETURNING 1',
    );
  });

  it('prune: deletes up to $1 expired rows of each table, oldest first, skipping locked ones', () => {
    expect(sql.prune.map(oneLine)).toEqual(
      [f, p].map(
        (t) =>
          `WITH expired AS ( SELECT id FROM ${t} WHERE expires_at < clock_timestamp() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED) DELETE FROM ${t} AS d USING expired WHERE d.id = expired.id`,
      ),
    );
  });
});

describe('postgres parking: the lot', () => {
  it('notes a failure under the row key: the time as given, the error as JSON, the retention', async () => {
    const { store, sent } = open({}, { retentionMs: 1000.5 });
    await store.parking.noteFailure('a\0b', 1234.5, 'bad \ud800');
    expect(sent).toEqual([{ text: sql.noteFailure, values: [rowKey('a\0b'), 1234.5, '"bad \\ud800"', 1000.5], client: 0 }]);
  });

  it('reads a failure, or none', async () => {
    const rows = [[{ first_failed_at: 12.5, attempts: 2, last_error: '"e \\ud800"' }], []];
    const { store, sent } = open({ answer: () => result(rows.shift()) });
    expect(await store.parking.failure('a\0b')).toEqual({ firstAt: 12.5, attempts: 2, lastError: 'e \ud800' });
    expect(await store.parking.failure('x')).toBeUndefined();
    expect(sent.map((q) => q.values)).toEqual([[rowKey('a\0b')], ['x']]);
    expect(sent[0]!.text).toBe(sql.failure);
  });

  it('parks a row of the delivery, with the retention and the bound; true when a row came back', async () => {
    const { store, sent } = open({ answer: () => result([{ '?column?': 1 }]) }, { parkedRetentionMs: 5000, maxParked: 9 });
    expect(await store.parking.park(parked)).toBe(true);
    expect(sent).toEqual([{ text: sql.park, values: [...PARKED_COLUMNS.map((c) => row[c as keyof typeof row]), 5000, 9], client: 0 }]);
  });

  it('parks for 7 days, at most 10,000, by default; no row back is a refusal', async () => {
    const { store, sent } = open({ answer: () => result([]) });
    expect(await store.parking.park({ ...parked, firstFailedAt: undefined, replayedAt: undefined })).toBe(false);
    const values = sent[0]!.values!;
    expect(values.slice(-2)).toEqual([DEFAULT_PARKED_RETENTION_MS, DEFAULT_MAX_PARKED]);
    expect([values[6], values[11]]).toEqual([null, null]);
  });

  it('sends only the bytes of a body that is a view into a larger buffer', async () => {
    const { store, sent } = open();
    await store.parking.park({ ...parked, body: new Uint8Array([7, 0xff, 0x00, 0x41, 7]).subarray(1, 4) });
    expect(sent[0]!.values![10]).toEqual(Buffer.from([0xff, 0x00, 0x41]));
  });

  it('lists all rows by default, or at most limit, as parked deliveries', async () => {
    const { store, sent } = open({ answer: () => result([row, { ...row, first_failed_at: null, replayed_at: null }]) });
    const listed = await store.parking.list();
    expect(listed).toEqual([parked, { ...parked, firstFailedAt: undefined, replayedAt: undefined }]);
    expect(listed[0]!.body.constructor).toBe(Uint8Array);
    await store.parking.list(3);
    expect(sent.map((q) => q.values)).toEqual([[null], [3]]);
    expect(sent[0]!.text).toBe(sql.list);
  });

  it('gets one row, or none', async () => {
    const rows = [[row], []];
    const { store, sent } = open({ answer: () => result(rows.shift()) });
    expect(await store.parking.get('a\0b')).toEqual(parked);
    expect(await store.parking.get('x')).toBeUndefined();
    expect(sent[0]).toEqual({ text: sql.get, values: [rowKey('a\0b')], client: 0 });
  });

  it('drops: true only for a row that had not expired', async () => {
    const rows = [[{ kept: true }], [{ kept: false }], []];
    const { store, sent } = open({ answer: () => result(rows.shift()) });
    expect(await store.parking.drop('a\0b')).toBe(true);
    expect(await store.parking.drop('a\0b')).toBe(false);
    expect(await store.parking.drop('a\0b')).toBe(false);
    expect(sent[0]).toEqual({ text: sql.drop, values: [rowKey('a\0b')], client: 0 });
  });

  it('uses the tables beside the table it is given', async () => {
    const { store, texts } = open({}, { table: 'hooks.Deliveries' });
    await store.parking.noteFailure('d', 1, 'e');
    expect(texts()).toEqual([parkingStatements('hooks.Deliveries').noteFailure]);
  });

  describe('timeouts', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it("fails a statement that is not answered within the store's commandTimeoutMs", async () => {
      const { store } = open({ answer: () => never() }, { commandTimeoutMs: 300 });
      const call = Promise.resolve(store.parking.failure('d'));
      const settled = jest.fn();
      call.then(settled, settled);
      await jest.advanceTimersByTimeAsync(299);
      expect(settled).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      await expect(call).rejects.toThrow(/did not answer/);
    });
  });

  it('refuses a parkedRetentionMs or maxParked out of bounds, naming it', () => {
    for (const [option, value] of [
      ['parkedRetentionMs', 0],
      ['maxParked', 0],
      ['maxParked', 2.5],
    ] as const)
      expect(() => open({}, { [option]: value })).toThrow(new RegExp(`\`${option}\``));
  });
});

describe('postgres parking: a database migrated by an earlier version (no parking tables)', () => {
  const missing = (depth: number) => {
    let err: { code?: string; cause?: unknown } = { code: '42P01' };
    for (let i = 0; i < depth; i++) err = { cause: err };
    return err;
  };
  function lotFailingWith(error: unknown) {
    const told: number[] = [];
    const lot = new PostgresParking({
      statement: () => Promise.reject(error),
      table: 'svc_webhook_deliveries',
      retentionMs: 1000,
      parkedRetentionMs: 1000,
      maxParked: 10,
      onMissingTables: () => void told.push(1),
    });
    return { lot, told };
  }

  it.each([0, 1, 2])('finds and notes no failure when the table is missing (the code %i causes deep), and says so once', async (depth) => {
    const { lot, told } = lotFailingWith(missing(depth));
    expect(await lot.failure('a')).toBeUndefined();
    await expect(lot.noteFailure('a', 1, 'e')).resolves.toBeUndefined();
    expect(await lot.failure('b')).toBeUndefined();
    expect(told).toHaveLength(1);
  });

  it('throws every other error, and a missing table found deeper than three causes', async () => {
    for (const error of [new Error('connection refused'), { code: '42703' }, missing(3), null]) {
      const { lot, told } = lotFailingWith(error);
      await expect(lot.failure('a')).rejects.toBe(error);
      await expect(lot.noteFailure('a', 1, 'e')).rejects.toBe(error);
      expect(told).toEqual([]);
    }
  });

  it('still fails to park on a missing table: parking has nowhere to keep it', async () => {
    const error = missing(1);
    const { lot } = lotFailingWith(error);
    await expect(lot.park(parked)).rejects.toBe(error);
  });
});
