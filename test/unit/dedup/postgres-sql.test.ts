import { createHash } from 'node:crypto';
import { CLAIM_LOST_MARKER, DEFAULT_TABLE, postgresMigrationSql, quoteTable, rowKey, statements, type Statements } from '../../../src/dedup/postgres-sql';

/**
 * The PostgreSQL store's SQL texts: what each statement says, on which table, with which
 * parameters. That PostgreSQL runs them as intended is tested against a real server in
 * test/postgres/.
 */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
const later = (param: string) => `clock_timestamp() + ${param}::float8 * interval '1 millisecond'`;

describe('quoteTable', () => {
  it.each([
    ['svc_webhook_deliveries', '"svc_webhook_deliveries"'],
    ['Deliveries', '"Deliveries"'],
    ['a', '"a"'],
    ['_private9', '"_private9"'],
    ['hooks.Deliveries', '"hooks"."Deliveries"'],
    ['a'.repeat(63), `"${'a'.repeat(63)}"`],
    [`s.${'Z'.repeat(63)}`, `"s"."${'Z'.repeat(63)}"`],
  ])('quotes %s, keeping its case', (table, quoted) => {
    expect(quoteTable(table)).toBe(quoted);
  });

  it.each([
    ['empty', ''],
    ['three parts', 'a.b.c'],
    ['an empty part', 'hooks.'],
    ['a leading digit', '1abc'],
    ['a leading digit after the schema', 'hooks.1abc'],
    ['a character that is not a letter, digit or underscore', 'a-b'],
    ['one at the end', 'abc!'],
    ['a space', 'a b'],
    ['SQL', 'x; DROP TABLE y'],
    ['quotes', '"quoted"'],
    ['more than 63 characters', 'a'.repeat(64)],
  ])('refuses a name with %s (TypeError)', (_what, table) => {
    expect(() => quoteTable(table)).toThrow(TypeError);
  });

  it('refuses a table that is not a string, even one that could be split', () => {
    expect(() => quoteTable(42 as never)).toThrow(TypeError);
    expect(() => quoteTable({ split: () => ['x'] } as never)).toThrow(TypeError);
  });
});

describe('postgresMigrationSql', () => {
  it('creates the default table svc_webhook_deliveries if it is missing: id the primary key, token, and expires_at not null', () => {
    expect(DEFAULT_TABLE).toBe('svc_webhook_deliveries');
    const text = oneLine(postgresMigrationSql().replace(/--.*$/gm, ''));
    // Then the parking lot's tables (test/unit/dedup/postgres-parking-sql.test.ts).
    expect(text.slice(0, text.indexOf(' CREATE TABLE IF NOT EXISTS "svc_webhook_deliveries_failures"'))).toBe(
      'CREATE TABLE IF NOT EXISTS "svc_webhook_deliveries" ( id text PRIMARY KEY, token text, expires_at timestamptz NOT NULL ); ' +
        'CREATE INDEX IF NOT EXISTS "svc_webhook_deliveries_expires_at_idx" ON "svc_webhook_deliveries" (expires_at);',
    );
  });

  it("names the table as given, and its index after the table's own name (without the schema)", () => {
    const text = postgresMigrationSql('hooks.Deliveries');
    expect(text).toContain('CREATE TABLE IF NOT EXISTS "hooks"."Deliveries" (');
    expect(text).toContain('CREATE INDEX IF NOT EXISTS "Deliveries_expires_at_idx" ON "hooks"."Deliveries" (expires_at);');
  });

  it("keeps the index name within PostgreSQL's 63 characters: the first 50 of the table's name", () => {
    const name = `${'a'.repeat(50)}${'b'.repeat(13)}`;
    expect(postgresMigrationSql(name)).toContain(`CREATE INDEX IF NOT EXISTS "${'a'.repeat(50)}_expires_at_idx" ON "${name}"`);
  });

  it('refuses a table name that is not a plain identifier', () => {
    expect(() => postgresMigrationSql('x; DROP TABLE y')).toThrow(TypeError);
  });
});

describe('rowKey', () => {
  const sha = (id: string) => `sha256:${createHash('sha256').update(Buffer.from(id, 'utf8')).digest('hex')}`;

  it('is the id itself up to 200 characters', () => {
    expect(rowKey('d1')).toBe('d1');
    expect(rowKey('x'.repeat(200))).toBe('x'.repeat(200));
  });

  it('is "sha256:" and the hex SHA-256 of the UTF-8 id for a longer id, or one with a NUL', () => {
    expect(rowKey('x'.repeat(201))).toBe(sha('x'.repeat(201)));
    expect(rowKey('with\0nul')).toBe(sha('with\0nul'));
    expect(rowKey(`é${'x'.repeat(200)}`)).toBe(sha(`é${'x'.repeat(200)}`));
  });

  it('is hashed for an id that begins with "sha256", so that it is never the row key of the long id it spells', () => {
    const long = 'x'.repeat(201);
    expect(rowKey(rowKey(long))).toBe(sha(rowKey(long)));
    expect(rowKey(rowKey(long))).not.toBe(rowKey(long));
    expect(rowKey('sha256')).toBe(sha('sha256'));
    expect(rowKey('sha25')).toBe('sha25');
  });

  it('is "sha256u:" and the SHA-256 of its key segment for an id with a lone surrogate (UTF-8 has no form for it)', () => {
    expect(rowKey('a\ud800:b')).toBe(`sha256u:${createHash('sha256').update('a%uD800%3Ab').digest('hex')}`);
    expect(rowKey('a\ud800')).not.toBe(rowKey('a\ufffd'));
    expect(rowKey('\udc00\ud800')).not.toBe(rowKey('\ud800\udc00'));
    // The segment of one id is never the UTF-8 of another hashed under the same marker.
    expect(rowKey('a%uD800'.padEnd(201, 'x'))).toMatch(/^sha256:/);
    expect(rowKey('a\ufffd')).toBe('a\ufffd');
    expect(rowKey('😀')).toBe('😀');
  });
});

describe('statements', () => {
  let sql: Statements;
  beforeAll(() => {
    sql = statements('hooks.Deliveries');
  });
  const t = '"hooks"."Deliveries"';
  const done = `INSERT INTO ${t} AS d (id, token, expires_at) VALUES ($1, NULL, ${later('$3')}) ON CONFLICT (id) DO UPDATE SET token = NULL, expires_at = EXCLUDED.expires_at WHERE d.token = $2`;

  it('claim: inserts ($1 id, $2 token, a lease of $3 ms), or takes over a row whose lease or retention ended; and says whether it claimed and whether the id is done', () => {
    expect(oneLine(sql.claim)).toBe(
      `WITH claimed AS ( INSERT INTO ${t} AS d (id, token, expires_at) VALUES ($1, $2, ${later('$3')}) ` +
        'ON CONFLICT (id) DO UPDATE SET token = EXCLUDED.token, expires_at = EXCLUDED.expires_at WHERE d.expires_at <= clock_timestamp() RETURNING 1) ' +
        `SELECT EXISTS (SELECT 1 FROM claimed) AS claimed, EXISTS (SELECT 1 FROM ${t} WHERE id = $1 AND token IS NULL AND expires_at > clock_timestamp()) AS done`,
    );
  });

  it('commit: records $1 as done for $3 ms, unless a token other than $2 holds it', () => {
    expect(oneLine(sql.commit)).toBe(done);
  });

  it('mark: the commit, failing with the claim-lost marker (a cast to int) unless it wrote exactly one row', () => {
    expect(CLAIM_LOST_MARKER).toBe('svc-webhooks: claim lost');
    expect(oneLine(sql.mark)).toBe(
      `WITH marked AS (${done} RETURNING 1) SELECT CASE WHEN n = 1 THEN 1 ELSE ('${CLAIM_LOST_MARKER}: this attempt no longer holds the delivery (' || n || ' rows)')::int END AS marked ` +
        'FROM (SELECT count(*) AS n FROM marked) AS c',
    );
  });

  it('release: deletes $1 while $2 holds it', () => {
    expect(sql.release).toBe(`DELETE FROM ${t} WHERE id = $1 AND token = $2`);
  });

  it('extend: moves the lease of $1 to $3 ms from now while $2 holds it', () => {
    expect(sql.extend).toBe(`UPDATE ${t} SET expires_at = ${later('$3')} WHERE id = $1 AND token = $2`);
  });

  it('prune: deletes up to $1 expired rows, oldest first, skipping locked ones', () => {
    expect(oneLine(sql.prune)).toBe(
      `WITH expired AS ( SELECT id FROM ${t} WHERE expires_at < clock_timestamp() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED) ` +
        `DELETE FROM ${t} AS d USING expired WHERE d.id = expired.id`,
    );
  });

  it('refuses a table name that is not a plain identifier', () => {
    expect(() => statements('a.b.c')).toThrow(TypeError);
  });
});
