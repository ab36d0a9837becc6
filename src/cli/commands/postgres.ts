import { parkingTables } from '../../dedup/postgres-parking-sql';
import { DEFAULT_TABLE, postgresMigrationSql, quoteTable } from '../../dedup/postgres-sql';
import { CliError, usageError } from '../cli-error';
import type { CliIo } from '../cli-io';
import type { Command } from '../command';
import { oneOf, parseOptions } from '../parse-options';

const help = `Usage: svc-webhooks postgres migrate [--table <name>] [--url <url>]
       svc-webhooks postgres sql [--table <name>]

Set up the tables of the PostgreSQL de-dup store (postgresStore): the table, and beside it
<table>_failures and <table>_parked for its parked deliveries. The store never creates
it by itself: apply this once per database, before the receivers use it (again is harmless).

  migrate   create the tables and their indexes in the database, if they are missing
  sql       print the migration's SQL, for your own migration tool (nothing is sent)

Options:
  --url <url>      the database, postgres://user@host:port/db (default: DATABASE_URL);
                   prefer the environment variable: a password on the command line
                   lands in shell history. The password is never printed.
  --table <name>   the table, "name" or "schema.name" (default ${DEFAULT_TABLE}); give the
                   store the same \`table\` option
  -h, --help       show this help

The SQL is also shipped in the package: svc-webhooks/sql/postgres-store.sql.

Example:
  DATABASE_URL=postgres://app@db.internal/app npx svc-webhooks postgres migrate
`;

const URL_ENV = 'DATABASE_URL';
// One migration at a time per database, whoever runs it (two deploys starting together).
const LOCK_KEY = "hashtext('svc-webhooks postgres migrate')";

export const postgresCommand: Command = {
  name: 'postgres',
  summary: "create the PostgreSQL store's table (migrate), or print its SQL",
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('postgres', args, { url: { type: 'string' }, table: { type: 'string' } });
    if (positionals.length !== 1) throw usageError('postgres takes one action: migrate or sql (see svc-webhooks postgres --help)');
    const action = oneOf(positionals[0], ['migrate', 'sql'] as const, 'the action')!;
    const table = values.table ?? DEFAULT_TABLE;
    try {
      quoteTable(table);
    } catch {
      throw usageError('--table must be a name like svc_webhook_deliveries or schema.name (letters, digits, underscores)');
    }
    if (action === 'sql') {
      if (values.url !== undefined) throw usageError('postgres sql sends nothing and takes no --url');
      io.stdout.write(postgresMigrationSql(table));
      return 0;
    }
    return migrate(io, databaseUrl(io, values.url), table);
  },
};

function databaseUrl(io: CliIo, flag: string | undefined): string {
  const url = flag ?? io.env[URL_ENV];
  if (url === undefined || url === '') throw usageError(`the database is required: set ${URL_ENV} or pass --url`);
  return url;
}

async function migrate(io: CliIo, url: string, table: string): Promise<number> {
  const hide = secretsOf(url);
  const where = describeDatabase(url);
  let pg: typeof import('pg');
  try {
    // An optional peer dependency of the package.
    pg = require('pg') as typeof import('pg');
  } catch {
    throw new CliError('postgres migrate needs the pg package: npm install pg');
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(${LOCK_KEY})`);
    const lot = parkingTables(table);
    const found = async (name: string) =>
      (await client.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [quoteTable(name)])).rows[0]?.found != null;
    const existed = await found(table);
    const lotExisted = (await found(lot.failures)) && (await found(lot.parked));
    await client.query(postgresMigrationSql(table));
    await client.query('COMMIT');
    if (!existed) io.stdout.write(`created table ${table} in ${where}\n`);
    else if (!lotExisted) io.stdout.write(`created the parking tables ${lot.failures} and ${lot.parked} beside table ${table} in ${where}\n`);
    else io.stdout.write(`table ${table} is already there in ${where}; nothing to change\n`);
    return 0;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new CliError(`could not migrate ${where}: ${hide(message)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The database as it may be printed: host, port and name, never the user's password. */
function describeDatabase(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}${parsed.port === '' ? '' : `:${parsed.port}`}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'the database';
  }
}

/** Removes the URL and its password from a message, should a driver ever quote them. */
function secretsOf(url: string): (text: string) => string {
  const passwords: string[] = [];
  try {
    const { password } = new URL(url);
    if (password !== '') passwords.push(password, decodeURIComponent(password));
  } catch {
    // Not a URL: the whole string is hidden below.
  }
  return (text) => passwords.reduce((out, password) => out.split(password).join('***'), text.split(url).join('<database url>'));
}
