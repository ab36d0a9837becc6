import { postgresMigrationSql, postgresStore, type PostgresStore, type PostgresStoreOptions } from '../../src';
import { runCli } from '../cli/run-cli';
import { describeParkingLot, parkedDelivery } from '../support/parking-contract';
import { PostgresServer } from '../support/postgres-server';

/** The PostgreSQL store's parking lot against a real PostgreSQL: the shared contract, then its tables. */
let server: PostgresServer;
const stores: PostgresStore[] = [];
let tables = 0;

async function store(options: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
  const table = options.table ?? `lot${++tables}`;
  await server.query(postgresMigrationSql(table));
  const s = postgresStore({ connectionString: server.url, ...options, table });
  stores.push(s);
  return s;
}

beforeAll(async () => {
  server = await PostgresServer.start();
}, 30_000);

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await server?.close();
});

describeParkingLot('postgres store', {
  open: (options) => store(options),
  unreachable: async (commandTimeoutMs) => {
    const s = postgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres', commandTimeoutMs });
    stores.push(s);
    return s;
  },
  freezable: async (commandTimeoutMs) => ({
    store: await store({ table: 'paused', commandTimeoutMs }),
    freeze: () => server.pause(),
    thaw: () => server.unpause(),
  }),
});

describe("the postgres store's parking tables", () => {
  it('keeps failures in <table>_failures and parked deliveries in <table>_parked, times as given', async () => {
    const s = await store({ table: 'named', retentionMs: 90_000_000, parkedRetentionMs: 5_000_000 });
    await s.parking.noteFailure('f', 1234.5, 'boom');
    const [failure] = await server.query('SELECT id, first_failed_at, attempts, last_error, expires_at - now() AS left FROM named_failures');
    expect(failure).toMatchObject({ id: 'f', first_failed_at: 1234.5, attempts: 1, last_error: '"boom"' });
    const parked = parkedDelivery({ id: 'p', parkedAt: 4242, body: new Uint8Array([0xff, 0]) });
    await s.parking.park(parked);
    const [row] = await server.query<{ body: Buffer; parked_at: number; seconds: number }>(
      'SELECT delivery, body, parked_at, extract(epoch FROM expires_at - now()) AS seconds FROM named_parked',
    );
    expect(row).toMatchObject({ delivery: '"p"', parked_at: 4242 });
    expect([...row!.body]).toEqual([0xff, 0]);
    expect(Number(row!.seconds)).toBeGreaterThan(4_900);
    expect(Number(row!.seconds)).toBeLessThanOrEqual(5_000);
  });

  it('puts the tables beside a table in a schema, in that schema', async () => {
    await server.query('CREATE SCHEMA IF NOT EXISTS hooks');
    const s = await store({ table: 'hooks.Deliveries' });
    await s.parking.park(parkedDelivery({ id: 'in-schema' }));
    await s.parking.noteFailure('in-schema', 1, 'e');
    expect(await server.query('SELECT id FROM hooks."Deliveries_parked"')).toEqual([{ id: 'in-schema' }]);
    expect(await server.query('SELECT id FROM hooks."Deliveries_failures"')).toEqual([{ id: 'in-schema' }]);
  });

  it('keys rows by the store row key: a long id is a hash, its id kept in full', async () => {
    const s = await store({ table: 'long_ids' });
    const id = 'L'.repeat(300);
    await s.parking.park(parkedDelivery({ id }));
    const [row] = await server.query<{ id: string; delivery: string }>('SELECT id, delivery FROM long_ids_parked');
    expect(row!.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.parse(row!.delivery)).toBe(id);
  });

  it('adds the parking tables to a table of an earlier version when migrated again, and says so', async () => {
    await server.query('CREATE TABLE earlier (id text PRIMARY KEY, token text, expires_at timestamptz NOT NULL)');
    const result = await runCli(['postgres', 'migrate', '--table', 'earlier'], { env: { DATABASE_URL: server.url } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('created the parking tables earlier_failures and earlier_parked beside table earlier');
    const again = await runCli(['postgres', 'migrate', '--table', 'earlier'], { env: { DATABASE_URL: server.url } });
    expect(again.stdout).toContain('already there');
    const s = postgresStore({ connectionString: server.url, table: 'earlier' });
    stores.push(s);
    const parked = parkedDelivery();
    expect(await s.parking.park(parked)).toBe(true);
    expect(await s.parking.get(parked.id)).toEqual(parked);
  });

  it('keeps receiving on a table of an earlier version not migrated again: nothing is parked, one warning', async () => {
    await server.query('CREATE TABLE unmigrated (id text PRIMARY KEY, token text, expires_at timestamptz NOT NULL)');
    const warnings: unknown[][] = [];
    const s = postgresStore({ connectionString: server.url, table: 'unmigrated', logger: { warn: (...args: unknown[]) => void warnings.push(args) } });
    stores.push(s);
    expect(await s.parking.failure('a')).toBeUndefined();
    await s.parking.noteFailure('a', 1, 'boom');
    expect(await s.parking.failure('a')).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0])).toContain('postgres migrate');
    // Only a missing table is forgiven: parking itself still says what is wrong.
    await expect(s.parking.park(parkedDelivery())).rejects.toThrow(/does not exist/);
  });

  it('applies the migration again without harm, keeping what is parked', async () => {
    const s = await store({ table: 'again' });
    const parked = parkedDelivery();
    await s.parking.park(parked);
    await server.query(postgresMigrationSql('again'));
    expect(await s.parking.get(parked.id)).toEqual(parked);
  });

  it("prunes expired failures and parked deliveries with the store's prune, leaving the live ones", async () => {
    const s = await store({ table: 'pruned', retentionMs: 100, parkedRetentionMs: 100 });
    const live = await store({ table: 'pruned' });
    await s.parking.noteFailure('old', 1, 'e');
    await s.parking.park(parkedDelivery({ id: 'old' }));
    await new Promise((r) => setTimeout(r, 200));
    await live.parking.noteFailure('new', 2, 'e');
    await live.parking.park(parkedDelivery({ id: 'new' }));
    expect(await s.prune()).toBe(2);
    expect(await server.query('SELECT id FROM pruned_failures')).toEqual([{ id: 'new' }]);
    expect(await server.query('SELECT id FROM pruned_parked')).toEqual([{ id: 'new' }]);
  });

  it('parks of new ids at once keep at least maxParked, list every one kept, and refuse the next', async () => {
    const s = await store({ table: 'racing', maxParked: 5 });
    const results = await Promise.all(Array.from({ length: 20 }, () => s.parking.park(parkedDelivery())));
    expect(results.filter(Boolean).length).toBeGreaterThanOrEqual(5);
    expect((await s.parking.list()).length).toBe(results.filter(Boolean).length);
    expect(await s.parking.park(parkedDelivery())).toBe(false);
  });
});
