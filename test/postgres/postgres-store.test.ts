import { createHash, randomUUID } from 'node:crypto';
import express from 'express';
import { Pool } from 'pg';
import { postgresMigrationSql, postgresStore, svcBoardWebhook, type ClaimResult } from '../../src';
import { memoryLogger, silentLogger } from '../support/apps';
import { eventually } from '../support/inbox';
import { post } from '../support/post';
import { BOARD_SECRET, fixture, signBoard } from '../support/sign';
import { useDatabase } from './database';

const db = useDatabase();
const store = db.store.bind(db);

function token(result: ClaimResult): string {
  if (result.state !== 'claimed') throw new Error(`expected a claim, got ${result.state}`);
  return result.token;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('postgresStore: the DeliveryStore contract against a real PostgreSQL', () => {
  it('claims an id once: a second claim while the lease holds is busy', async () => {
    const s = store();
    const id = randomUUID();
    expect((await s.claim(id, 10_000)).state).toBe('claimed');
    expect(await s.claim(id, 10_000)).toEqual({ state: 'busy' });
  });

  it('answers done for a committed id, from another store on the same table', async () => {
    const [a, b] = [store(), store()];
    const id = randomUUID();
    await a.commit(id, token(await a.claim(id, 10_000)));
    expect(await b.claim(id, 10_000)).toEqual({ state: 'done' });
  });

  it('makes a released id claimable again', async () => {
    const s = store();
    const id = randomUUID();
    await s.release(id, token(await s.claim(id, 10_000)));
    expect((await s.claim(id, 10_000)).state).toBe('claimed');
  });

  it('lets a claim whose lease lapsed be taken over, and the old token then neither releases nor commits it', async () => {
    const s = store();
    const id = randomUUID();
    const stale = token(await s.claim(id, 50));
    await sleep(120);
    const fresh = token(await s.claim(id, 10_000));
    await s.release(id, stale);
    expect(await s.claim(id, 10_000)).toEqual({ state: 'busy' });
    await s.commit(id, stale);
    await s.release(id, fresh);
    expect((await s.claim(id, 10_000)).state).toBe('claimed');
  });

  it('records a lapsed claim that nobody took over as done when its holder commits', async () => {
    const s = store();
    const id = randomUUID();
    const t = token(await s.claim(id, 50));
    await sleep(120);
    await s.prune();
    await s.commit(id, t);
    expect(await s.claim(id, 10_000)).toEqual({ state: 'done' });
  });

  it('keeps a claim past its first lease while it is extended', async () => {
    const s = store();
    const id = randomUUID();
    const t = token(await s.claim(id, 150));
    for (let i = 0; i < 4; i++) {
      await sleep(60);
      await s.extend(id, t, 150);
    }
    expect(await s.claim(id, 10_000)).toEqual({ state: 'busy' });
  });

  it('gives exactly one of 50 concurrent claims of one id, across two pools', async () => {
    const [a, b] = [store(), store()];
    const id = randomUUID();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).claim(id, 10_000)));
    expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.state === 'busy')).toHaveLength(49);
  });

  it('forgets a done id after its retention, so a later claim gets it', async () => {
    const s = store({ retentionMs: 100 });
    const id = randomUUID();
    await s.commit(id, token(await s.claim(id, 10_000)));
    expect(await s.claim(id, 10_000)).toEqual({ state: 'done' });
    await sleep(200);
    expect((await s.claim(id, 10_000)).state).toBe('claimed');
  });

  it('keeps an id of any length or content apart from every other id', async () => {
    const s = store();
    const long = 'x'.repeat(5000);
    const ids = [long, `${long}y`, 'with\0nul', 'with\0nul2', 'sha256:abc'];
    for (const id of ids) await s.commit(id, token(await s.claim(id, 10_000)));
    for (const id of ids) expect(await s.claim(id, 10_000)).toEqual({ state: 'done' });
    expect((await s.claim(`${long}z`, 10_000)).state).toBe('claimed');
  });

  it('keeps the id `sha256:<hex>` apart from the over-long id whose hash it spells, either first', async () => {
    for (const order of ['long first', 'hash first']) {
      const s = store();
      const long = `${order}:${'x'.repeat(600)}`;
      const spelled = `sha256:${createHash('sha256').update(long, 'utf8').digest('hex')}`;
      const [first, second] = order === 'long first' ? [long, spelled] : [spelled, long];
      await s.commit(first, token(await s.claim(first, 10_000)));
      expect((await s.claim(second, 10_000)).state).toBe('claimed');
      expect(await s.claim(first, 10_000)).toEqual({ state: 'done' });
    }
  });

  it('keeps an id with a lone surrogate apart from the one with U+FFFD in its place', async () => {
    const s = store();
    const lone = `a\ud800-${randomUUID()}`;
    const other = lone.replace('\ud800', '\ufffd');
    await s.commit(lone, token(await s.claim(lone, 10_000)));
    expect((await s.claim(other, 10_000)).state).toBe('claimed');
    expect(await s.claim(lone, 10_000)).toEqual({ state: 'done' });
  });

  it('works in a table of its own, named with a schema', async () => {
    await db.server.query('CREATE SCHEMA IF NOT EXISTS hooks');
    await db.server.query(postgresMigrationSql('hooks.Deliveries'));
    const s = store({ table: 'hooks.Deliveries' });
    const id = randomUUID();
    await s.commit(id, token(await s.claim(id, 10_000)));
    const rows = await db.server.query('SELECT id FROM hooks."Deliveries" WHERE id = $1', [id]);
    expect(rows).toHaveLength(1);
  });

  it('refuses a table name that is not a plain identifier', () => {
    for (const table of ['x; DROP TABLE y', 'a.b.c', '"quoted"', '', '1abc']) {
      expect(() => postgresStore({ connectionString: db.server.url, table })).toThrow(TypeError);
    }
  });

  it('needs exactly one of pool and connectionString, and positive numbers', () => {
    expect(() => postgresStore({} as never)).toThrow(TypeError);
    const pool = new Pool({ connectionString: db.server.url });
    expect(() => postgresStore({ pool, connectionString: db.server.url })).toThrow(TypeError);
    expect(() => postgresStore({ pool, commandTimeoutMs: 0 })).toThrow(RangeError);
    expect(() => postgresStore({ pool, retentionMs: -1 })).toThrow(RangeError);
    expect(() => postgresStore({ pool, pruneIntervalMs: Number.NaN })).toThrow(RangeError);
    expect(() => postgresStore({ pool, pruneIntervalMs: 2 ** 31 })).toThrow(RangeError);
    expect(() => postgresStore({ pool, commandTimeoutMs: 2 ** 31 })).toThrow(RangeError);
    return pool.end();
  });

  it('uses a pool it is given and leaves it open on close', async () => {
    const pool = new Pool({ connectionString: db.server.url });
    pool.on('error', () => undefined);
    const s = postgresStore({ pool });
    const id = randomUUID();
    expect((await s.claim(id, 10_000)).state).toBe('claimed');
    await s.close();
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
  });

  it('says to apply the migration when the table is missing', async () => {
    const s = store({ table: 'never_migrated' });
    await expect(s.claim(randomUUID(), 10_000)).rejects.toThrow(/migrat/);
  });
});

describe('postgresStore: pruning', () => {
  it('deletes expired done ids and lapsed claims, and keeps live rows', async () => {
    await db.server.query(postgresMigrationSql('prune_rows'));
    const short = store({ table: 'prune_rows', retentionMs: 50 });
    const long = store({ table: 'prune_rows' });
    for (let i = 0; i < 30; i++) {
      const id = `old-${i}`;
      await short.commit(id, token(await short.claim(id, 10_000)));
    }
    await short.claim('lapsed', 20);
    await long.commit('kept-done', token(await long.claim('kept-done', 10_000)));
    await long.claim('kept-claim', 10_000);
    await sleep(100);
    expect(await long.prune()).toBe(31);
    const left = await db.server.query<{ id: string }>('SELECT id FROM prune_rows ORDER BY id');
    expect(left.map((r) => r.id)).toEqual(['kept-claim', 'kept-done']);
  });

  it('deletes more rows than one batch, in batches', async () => {
    await db.server.query(postgresMigrationSql('prune_many'));
    await db.server.query(
      "INSERT INTO prune_many (id, token, expires_at) SELECT 'id-' || g, NULL, now() - interval '1 hour' FROM generate_series(1, 2500) AS g",
    );
    expect(await store({ table: 'prune_many' }).prune()).toBe(2500);
  });

  it('skips a row that a running delivery has locked instead of waiting for it', async () => {
    await db.server.query(postgresMigrationSql('prune_locked'));
    await db.server.query(
      "INSERT INTO prune_locked (id, token, expires_at) VALUES ('locked', NULL, now() - interval '1 hour'), ('free', NULL, now() - interval '1 hour')",
    );
    const holder = new Pool({ connectionString: db.server.url, max: 1 });
    const client = await holder.connect();
    try {
      await client.query('BEGIN');
      await client.query("SELECT 1 FROM prune_locked WHERE id = 'locked' FOR UPDATE");
      const started = Date.now();
      expect(await store({ table: 'prune_locked', commandTimeoutMs: 5000 }).prune()).toBe(1);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await client.query('ROLLBACK');
      client.release();
      await holder.end();
    }
    expect((await db.server.query('SELECT id FROM prune_locked')).map((r) => r.id)).toEqual(['locked']);
  });

  it('prunes by itself every pruneIntervalMs', async () => {
    await db.server.query(postgresMigrationSql('prune_timer'));
    await db.server.query("INSERT INTO prune_timer (id, token, expires_at) VALUES ('old', NULL, now() - interval '1 hour')");
    store({ table: 'prune_timer', pruneIntervalMs: 50 });
    const deadline = Date.now() + 5000;
    while ((await db.server.query('SELECT id FROM prune_timer')).length > 0 && Date.now() < deadline) await sleep(25);
    expect(await db.server.query('SELECT id FROM prune_timer')).toEqual([]);
  });
});

describe('postgresStore: an unreachable or hung database', () => {
  it('fails a claim within the command timeout while the server is frozen, and claims again once it answers', async () => {
    const s = store({ commandTimeoutMs: 300 });
    await s.claim(randomUUID(), 10_000); // a pooled connection exists
    db.server.pause();
    try {
      const started = Date.now();
      await expect(s.claim(randomUUID(), 10_000)).rejects.toThrow();
      await expect(s.commit(randomUUID(), 'token')).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      db.server.unpause();
    }
    expect((await s.claim(randomUUID(), 10_000)).state).toBe('claimed');
  });

  it('keeps a connection the frozen server opens after its caller gave up: it joins the pool and serves the next claim', async () => {
    const name = `late-${randomUUID().slice(0, 8)}`;
    const backends = async () =>
      Number((await db.server.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [name]))[0]!.n);
    const s = store({ connectionString: `${db.server.url}?application_name=${name}`, commandTimeoutMs: 300 });
    db.server.pause();
    try {
      await expect(s.claim(randomUUID(), 10_000)).rejects.toThrow(/connect/);
      // Past the caller's deadline: an attempt aborted there would be gone before the server wakes.
      await sleep(600);
    } finally {
      db.server.unpause();
    }
    await eventually(async () => (await backends()) > 0, 5000, 'the late connection to reach the server');
    expect(await backends()).toBe(1);
    expect((await s.claim(randomUUID(), 10_000)).state).toBe('claimed');
    expect(await backends()).toBe(1);
  });

  it('fails at once while the server is stopped, and works again after it restarts', async () => {
    const s = store({ commandTimeoutMs: 1000 });
    const id = randomUUID();
    const t = token(await s.claim(id, 10_000));
    await db.server.stop();
    try {
      const started = Date.now();
      await expect(s.claim(randomUUID(), 10_000)).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      await db.server.resume();
    }
    // The claim made before the outage survived it.
    expect(await s.claim(id, 10_000)).toEqual({ state: 'busy' });
    await s.commit(id, t);
    expect(await s.claim(id, 10_000)).toEqual({ state: 'done' });
  });

  it('makes the receiver answer 503 store_unavailable with Retry-After in bounded time, running no handler, until the database answers again', async () => {
    const handler = jest.fn();
    const s = store({ commandTimeoutMs: 300 });
    const app = express().use(svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, store: s }).on('task.created', handler));
    const event = fixture('board', 'task.created');
    db.server.pause();
    try {
      const started = Date.now();
      const res = await post(app, '/webhooks/board', signBoard(event));
      expect([res.status, res.body.code]).toEqual([503, 'store_unavailable']);
      expect(res.headers['retry-after']).toBeDefined();
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      db.server.unpause();
    }
    expect(handler).not.toHaveBeenCalled();
    await post(app, '/webhooks/board', signBoard(event)).expect(200, { ok: true });
    await post(app, '/webhooks/board', signBoard(event)).expect(200, { ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('makes the receiver answer 503 while the table is missing, and says why in the log', async () => {
    const s = store({ table: 'not_migrated_yet' });
    const { logger, text } = memoryLogger();
    const app = express().use(svcBoardWebhook({ secret: BOARD_SECRET, logger, store: s }).on('task.created', () => undefined));
    const res = await post(app, '/webhooks/board', signBoard(fixture('board', 'task.created')));
    expect([res.status, res.body.code]).toEqual([503, 'store_unavailable']);
    expect(text()).toContain('postgres migrate');
  });
});
