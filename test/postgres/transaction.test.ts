import express from 'express';
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import {
  deliveryDoneSql,
  memoryStore,
  postgresStore,
  svcBoardWebhook,
  SvcWebhookError,
  type BoardContext,
  type BoardHandler,
  type SqlClient,
  type WebhookOptions,
} from '../../src';
import { deferred, silentLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, fixture, signBoard } from '../support/sign';
import { useDatabase } from './database';

const db = useDatabase(['CREATE TABLE effects (delivery_id text NOT NULL, note text)']);
const store = db.store.bind(db);

function app(handler: BoardHandler, options: Partial<WebhookOptions> = {}) {
  const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, store: store(), ...options }).on('task.created', handler);
  return express().use(board);
}

async function effects(deliveryId: string): Promise<string[]> {
  const rows = await db.server.query<{ note: string }>('SELECT note FROM effects WHERE delivery_id = $1', [deliveryId]);
  return rows.map((r) => r.note);
}

/** A handler whose only effect is one row, written in the delivery's transaction. */
const writesRow: BoardHandler = (event, ctx) =>
  ctx.transaction(async (tx) => {
    await tx.query('INSERT INTO effects (delivery_id, note) VALUES ($1, $2)', [event.id, 'written']);
  });

describe('ctx.transaction with the PostgreSQL store', () => {
  it("commits the handler's row and the done mark together: a repeat is a duplicate and writes nothing", async () => {
    const a = app(writesRow);
    const event = fixture('board', 'task.created');
    await post(a, '/webhooks/board', signBoard(event)).expect(200, { ok: true });
    await post(a, '/webhooks/board', signBoard(event)).expect(200, { ok: true, duplicate: true });
    expect(await effects(event.id)).toEqual(['written']);
    const [row] = await db.server.query<{ token: string | null }>('SELECT token FROM svc_webhook_deliveries WHERE id = $1', [event.id]);
    expect(row).toEqual({ token: null });
  });

  it("resolves to what the work returns, and gives it the transaction's client", async () => {
    let seen: unknown;
    const a = app(async (_event, ctx) => {
      seen = await ctx.transaction(async (tx: PoolClient) => (await tx.query<{ open: boolean }>('SELECT now() = statement_timestamp() AS open')).rows[0]);
    });
    await post(a, '/webhooks/board', signBoard(fixture('board', 'task.created'))).expect(200);
    // Inside a transaction, now() is the transaction's start and differs from the statement's.
    expect(seen).toEqual({ open: false });
  });

  it('rolls back the row when the work throws, answers 500, and the retry writes it once', async () => {
    let attempts = 0;
    const a = app((event, ctx) =>
      ctx.transaction(async (tx) => {
        attempts++;
        await tx.query('INSERT INTO effects (delivery_id, note) VALUES ($1, $2)', [event.id, `attempt ${attempts}`]);
        if (attempts === 1) throw new Error('fails after its write');
      }),
    );
    const event = fixture('board', 'task.created');
    const failed = await post(a, '/webhooks/board', signBoard(event));
    expect([failed.status, failed.body.code]).toEqual([500, 'handler_failed']);
    expect(await effects(event.id)).toEqual([]);
    await post(a, '/webhooks/board', signBoard(event)).expect(200, { ok: true });
    expect(await effects(event.id)).toEqual(['attempt 2']);
  });

  it("rolls back when the work's own statement fails, and the claim is released for the retry", async () => {
    let attempts = 0;
    const a = app((event, ctx) =>
      ctx.transaction(async (tx) => {
        attempts++;
        await tx.query('INSERT INTO effects (delivery_id, note) VALUES ($1, $2)', [event.id, 'before']);
        if (attempts === 1) await tx.query('SELECT 1/0');
      }),
    );
    const event = fixture('board', 'task.created');
    await post(a, '/webhooks/board', signBoard(event)).expect(500);
    await post(a, '/webhooks/board', signBoard(event)).expect(200, { ok: true });
    expect(await effects(event.id)).toEqual(['before']);
  });

  it('rolls back a transaction whose claim lapsed and was taken by another attempt (409), which then writes once', async () => {
    const s = store();
    const event = fixture('board', 'task.created');
    const first = await s.claim(event.id, 50);
    if (first.state !== 'claimed') throw new Error('expected a claim');
    await new Promise((r) => setTimeout(r, 120));
    const second = await s.claim(event.id, 10_000);
    if (second.state !== 'claimed') throw new Error('expected the lapsed claim to be taken over');
    const write = (note: string) => async (tx: SqlClient) => void (await tx.query('INSERT INTO effects (delivery_id, note) VALUES ($1, $2)', [event.id, note]));
    await expect(s.transaction(event.id, first.token, write('stale attempt'))).rejects.toMatchObject({ code: 'delivery_in_progress', status: 409 });
    await s.transaction(event.id, second.token, write('current attempt'));
    expect(await effects(event.id)).toEqual(['current attempt']);
    expect(await s.claim(event.id, 10_000)).toEqual({ state: 'done' });
  });

  it.each([
    ['parkAfterMs false', { parkAfterMs: false as const }, 2], // the claim, the transaction
    ['parking on (the default)', {}, 3], // the claim, the failure lookup beside it, the transaction
  ])("makes the receiver's own commit after the transaction a no-op that costs no round trip (%s)", async (_name, options, expected) => {
    const pool = new Pool({ connectionString: db.server.url });
    pool.on('error', () => undefined);
    let connections = 0;
    const counting = { connect: () => (connections++, pool.connect()) };
    const s = postgresStore({ pool: counting });
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, store: s, ...options }).on('task.created', writesRow);
    const event = fixture('board', 'task.created');
    await post(express().use(board), '/webhooks/board', signBoard(event)).expect(200, { ok: true });
    expect(connections).toBe(expected);
    expect(await effects(event.id)).toEqual(['written']);
    await s.close();
    await pool.end();
  });

  describe('when the connection fails at COMMIT, so that its outcome is unknown to the receiver', () => {
    /** A pool whose clients fail the first COMMIT as a lost connection would: `after` it ran, or before it was sent. */
    function commitFailing(when: 'after' | 'before') {
      const pool = new Pool({ connectionString: db.server.url });
      pool.on('error', () => undefined);
      let armed = true;
      const lostConnection = () => new Error('Connection terminated unexpectedly');
      const connect = async () => {
        const client = await pool.connect();
        return {
          query: async (text: string, values?: unknown[]) => {
            if (text !== 'COMMIT' || !armed) return client.query(text, values);
            armed = false;
            if (when === 'after') await client.query('COMMIT');
            throw lostConnection();
          },
          release: (destroy?: boolean | Error) => client.release(destroy),
          on: (event: 'error', listener: (err: Error) => void) => client.on(event, listener),
          off: (event: 'error', listener: (err: Error) => void) => client.off(event, listener),
        };
      };
      return { pool, store: postgresStore({ pool: { connect } }) };
    }

    it.each([
      ['committed, its answer lost', 'after' as const, ['written'], { ok: true, duplicate: true }],
      ['never sent', 'before' as const, [], { ok: true }],
    ])('answers 503 when the COMMIT was %s, and the retry finds out from the mark: one row in the end', async (_case, when, rowsAfterFailure, retryBody) => {
      const { pool, store: s } = commitFailing(when);
      const a = express().use(
        svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, store: s, timeoutMs: 1000, leaseMs: 2000 }).on('task.created', writesRow),
      );
      const event = fixture('board', 'task.created');
      const res = await post(a, '/webhooks/board', signBoard(event));
      expect([res.status, res.body.code]).toEqual([503, 'store_unavailable']);
      expect(await effects(event.id)).toEqual(rowsAfterFailure);
      await post(a, '/webhooks/board', signBoard(event)).expect(200, retryBody);
      expect(await effects(event.id)).toEqual(['written']);
      await s.close();
      await pool.end();
    });
  });

  it('answers 503 store_unavailable when the database stops mid-transaction; nothing is lost and the retry writes once', async () => {
    const inside = deferred();
    const proceed = deferred();
    let attempts = 0;
    const a = app(
      (event, ctx) =>
        ctx.transaction(async (tx) => {
          attempts++;
          await tx.query('INSERT INTO effects (delivery_id, note) VALUES ($1, $2)', [event.id, `attempt ${attempts}`]);
          if (attempts === 1) {
            inside.resolve();
            await proceed.promise;
          }
          await tx.query('SELECT 1');
        }),
      { timeoutMs: 1000, leaseMs: 2000 },
    );
    const event = fixture('board', 'task.created');
    const answer = post(a, '/webhooks/board', signBoard(event));
    const answered = answer.then((res) => res);
    await inside.promise;
    await db.server.stop();
    proceed.resolve();
    const res = await answered;
    expect([res.status, res.body.code]).toEqual([503, 'store_unavailable']);
    expect(res.headers['retry-after']).toBeDefined();
    // While the database is down, new deliveries fail closed too.
    const other = await post(a, '/webhooks/board', signBoard(fixture('board', 'task.created')));
    expect([other.status, other.body.code]).toEqual([503, 'store_unavailable']);
    await db.server.resume();
    expect(await effects(event.id)).toEqual([]);
    // The claim was made before the outage and could not be released during it: the retry waits for its lease.
    const retry = async () => (await post(a, '/webhooks/board', signBoard(event))).status;
    const deadline = Date.now() + 15_000;
    let status = await retry();
    while (status === 409 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      status = await retry();
    }
    expect(status).toBe(200);
    expect(await effects(event.id)).toEqual(['attempt 2']);
  }, 30_000);

  it('answers 503 when the connection is lost inside the work, and the retry writes once', async () => {
    let attempts = 0;
    const a = app((event, ctx) =>
      ctx.transaction(async (tx) => {
        attempts++;
        await tx.query('INSERT INTO effects (delivery_id, note) VALUES ($1, $2)', [event.id, `attempt ${attempts}`]);
        if (attempts === 1) await tx.query('SELECT pg_terminate_backend(pg_backend_pid())');
      }),
    );
    const event = fixture('board', 'task.created');
    const res = await post(a, '/webhooks/board', signBoard(event));
    expect([res.status, res.body.code]).toEqual([503, 'store_unavailable']);
    await post(a, '/webhooks/board', signBoard(event)).expect(200, { ok: true });
    expect(await effects(event.id)).toEqual(['attempt 2']);
  });

  it("answers a store_unavailable error that the handler made itself as 500 handler_failed: only the store's own pass through", async () => {
    const a = app(() => {
      throw new SvcWebhookError('store_unavailable', 'made by the handler');
    });
    const res = await post(a, '/webhooks/board', signBoard(fixture('board', 'task.created')));
    expect([res.status, res.body.code]).toEqual([500, 'handler_failed']);
  });

  it('refuses a transaction with a store that has none (500, the handler fails with a TypeError)', async () => {
    let thrown: unknown;
    const a = app(
      (_event, ctx) =>
        ctx
          .transaction(async () => undefined)
          .catch((err: unknown) => {
            thrown = err;
            throw err;
          }),
      { store: memoryStore() },
    );
    const res = await post(a, '/webhooks/board', signBoard(fixture('board', 'task.created')));
    expect([res.status, res.body.code]).toEqual([500, 'handler_failed']);
    expect(thrown).toBeInstanceOf(TypeError);
  });

  it('refuses a second transaction in one delivery before it starts, keeping the first', async () => {
    let second: unknown;
    const a = app(async (event, ctx) => {
      await writesRow(event, ctx);
      second = await ctx.transaction(async () => 'ran').catch((err: unknown) => err);
    });
    const event = fixture('board', 'task.created');
    await post(a, '/webhooks/board', signBoard(event)).expect(200);
    expect(second).toBeInstanceOf(TypeError);
    expect(await effects(event.id)).toEqual(['written']);
  });

  it("refuses a transaction for a delivery that has more than one handler, so no handler's failure can be lost", async () => {
    let thrown: unknown;
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, store: store() })
      .on('task.created', (event, ctx) =>
        Promise.resolve(writesRow(event, ctx as BoardContext)).catch((err: unknown) => {
          thrown = err;
          throw err;
        }),
      )
      .onAny(() => undefined);
    const event = fixture('board', 'task.created');
    await post(express().use(board), '/webhooks/board', signBoard(event)).expect(500);
    expect(thrown).toBeInstanceOf(TypeError);
    expect(await effects(event.id)).toEqual([]);
  });
});

describe('deliveryDoneSql: the done mark inside a transaction of your own (Kysely)', () => {
  interface Database {
    effects: { delivery_id: string; note: string | null };
  }
  const openKysely = () => new Kysely<Database>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: db.server.url }) }) });

  it('writes the row and the mark in one Kysely transaction: a repeat is a duplicate', async () => {
    const kysely = openKysely();
    const a = app((event, ctx) =>
      kysely.transaction().execute(async (trx) => {
        await trx.insertInto('effects').values({ delivery_id: event.id, note: 'kysely' }).execute();
        const mark = deliveryDoneSql(ctx);
        await trx.executeQuery(CompiledQuery.raw(mark.text, mark.values));
      }),
    );
    const event = fixture('board', 'task.created');
    await post(a, '/webhooks/board', signBoard(event)).expect(200, { ok: true });
    await post(a, '/webhooks/board', signBoard(event)).expect(200, { ok: true, duplicate: true });
    expect(await effects(event.id)).toEqual(['kysely']);
    await kysely.destroy();
  });

  it('rolls the mark back with the row when the transaction fails after it, so the retry runs', async () => {
    const kysely = openKysely();
    let attempts = 0;
    const a = app((event, ctx) =>
      kysely.transaction().execute(async (trx) => {
        attempts++;
        await trx
          .insertInto('effects')
          .values({ delivery_id: event.id, note: `attempt ${attempts}` })
          .execute();
        const mark = deliveryDoneSql(ctx);
        await trx.executeQuery(CompiledQuery.raw(mark.text, mark.values));
        if (attempts === 1) throw new Error('fails after the mark');
      }),
    );
    const event = fixture('board', 'task.created');
    await post(a, '/webhooks/board', signBoard(event)).expect(500);
    await post(a, '/webhooks/board', signBoard(event)).expect(200, { ok: true });
    expect(await effects(event.id)).toEqual(['attempt 2']);
    await kysely.destroy();
  });

  it('fails the mark, rolling the transaction back, when another attempt holds the delivery now', async () => {
    const kysely = openKysely();
    const s = store();
    const event = fixture('board', 'task.created');
    const taken = deferred();
    let run: Promise<unknown> | undefined;
    const a = express().use(
      svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, store: s, timeoutMs: 50, leaseMs: 100 }).on('task.created', (e, ctx) => {
        run = kysely.transaction().execute(async (trx) => {
          await trx.insertInto('effects').values({ delivery_id: e.id, note: 'stale' }).execute();
          await taken.promise;
          const mark = deliveryDoneSql(ctx);
          await trx.executeQuery(CompiledQuery.raw(mark.text, mark.values));
        });
        return run;
      }),
    );
    // The handler outlives its deadline (503) and goes on holding its claim.
    expect((await post(a, '/webhooks/board', signBoard(event))).status).toBe(503);
    // Another attempt holds the delivery now, as after a lapsed lease.
    await db.server.query("UPDATE svc_webhook_deliveries SET token = 'another attempt' WHERE id = $1", [event.id]);
    taken.resolve();
    await expect(run).rejects.toThrow();
    expect(await effects(event.id)).toEqual([]);
    const [row] = await db.server.query('SELECT token FROM svc_webhook_deliveries WHERE id = $1', [event.id]);
    expect(row).toEqual({ token: 'another attempt' });
    await kysely.destroy();
  });

  it('is refused for a store that is not the PostgreSQL store', async () => {
    let thrown: unknown;
    const a = app(
      (_event, ctx) => {
        try {
          deliveryDoneSql(ctx);
        } catch (err) {
          thrown = err;
          throw err;
        }
      },
      { store: memoryStore() },
    );
    await post(a, '/webhooks/board', signBoard(fixture('board', 'task.created'))).expect(500);
    expect(thrown).toBeInstanceOf(TypeError);
  });
});
