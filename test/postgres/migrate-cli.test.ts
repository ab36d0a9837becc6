import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { postgresMigrationSql, postgresStore } from '../../src';
import { expectOneLine, ROOT, runCli, spawnCli } from '../cli/run-cli';
import { PostgresServer } from '../support/postgres-server';

let pg: PostgresServer;

beforeAll(async () => {
  pg = await PostgresServer.start();
});

afterAll(async () => {
  await pg.close();
});

const tableExists = async (name: string) => (await pg.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [name]))[0]?.found !== null;

describe('svc-webhooks postgres migrate', () => {
  it('creates the table from DATABASE_URL, and a second run changes nothing', async () => {
    expect(await tableExists('svc_webhook_deliveries')).toBe(false);
    const first = await runCli(['postgres', 'migrate'], { env: { DATABASE_URL: pg.url } });
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(first.stdout).toContain('created table svc_webhook_deliveries');
    expect(await tableExists('svc_webhook_deliveries')).toBe(true);
    const again = await runCli(['postgres', 'migrate'], { env: { DATABASE_URL: pg.url } });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already there');
  });

  it('makes a table the store works with, named by --table with a schema', async () => {
    await pg.query('CREATE SCHEMA IF NOT EXISTS webhooks');
    const result = await runCli(['postgres', 'migrate', '--url', pg.url, '--table', 'webhooks.deliveries']);
    expect(result.code).toBe(0);
    const store = postgresStore({ connectionString: pg.url, table: 'webhooks.deliveries' });
    try {
      const claim = await store.claim('migrated', 10_000);
      expect(claim.state).toBe('claimed');
      if (claim.state === 'claimed') await store.commit('migrated', claim.token);
      expect(await store.claim('migrated', 10_000)).toEqual({ state: 'done' });
    } finally {
      await store.close();
    }
  });

  it('lets several deploys migrate at once', async () => {
    const results = await Promise.all([1, 2, 3].map(() => runCli(['postgres', 'migrate', '--table', 'raced'], { env: { DATABASE_URL: pg.url } })));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(results.filter((r) => r.stdout.includes('created table raced'))).toHaveLength(1);
  });

  it('runs through the real launcher', async () => {
    const result = await spawnCli(['postgres', 'migrate', '--table', 'launched'], { env: { DATABASE_URL: pg.url } });
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(await tableExists('launched')).toBe(true);
  });

  it('never prints the password, when it succeeds or when it fails', async () => {
    const password = 'Sup3r-secret-pw';
    const withPassword = pg.url.replace('postgres@', `postgres:${password}@`);
    const ok = await runCli(['postgres', 'migrate', '--table', 'pw_ok'], { env: { DATABASE_URL: withPassword } });
    expect(ok.code).toBe(0);
    expect(ok.stdout + ok.stderr).not.toContain(password);
    const closed = `postgres://app:${password}@127.0.0.1:1/app`;
    const failed = await runCli(['postgres', 'migrate', '--url', closed]);
    expect(failed.code).toBe(1);
    expectOneLine(failed.stderr);
    expect(failed.stdout + failed.stderr).not.toContain(password);
    expect(failed.stderr).toContain('127.0.0.1:1/app');
  });

  it('exits 2 without a database, with an unknown action, or a table name that is not an identifier', async () => {
    for (const args of [
      ['postgres', 'migrate'],
      ['postgres', 'create'],
      ['postgres'],
      ['postgres', 'migrate', '--table', 'x;drop'],
      ['postgres', 'sql', '--url', pg.url],
    ]) {
      const result = await runCli(args, { env: {} });
      expect(result.code).toBe(2);
      expectOneLine(result.stderr);
    }
  });
});

describe('svc-webhooks postgres sql and the shipped migration', () => {
  it('prints the migration without connecting anywhere', async () => {
    const result = await runCli(['postgres', 'sql', '--table', 'app.hooks']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(postgresMigrationSql('app.hooks'));
  });

  it('ships sql/postgres-store.sql equal to the default migration', () => {
    expect(readFileSync(join(ROOT, 'sql', 'postgres-store.sql'), 'utf8')).toBe(postgresMigrationSql());
  });

  it('applies as plain SQL, the way another migration tool would run it', async () => {
    await pg.query(readFileSync(join(ROOT, 'sql', 'postgres-store.sql'), 'utf8').replaceAll('svc_webhook_deliveries', 'by_tool'));
    expect(await tableExists('by_tool')).toBe(true);
  });
});
