import { DEFAULT_RETENTION_MS } from '../../../src/dedup/delivery-store';
import { StoreTimeoutError } from '../../../src/dedup/postgres-failure';
import { parkingStatements } from '../../../src/dedup/postgres-parking-sql';
import { rowKey, statements, type Statements } from '../../../src/dedup/postgres-sql';
import { postgresStore, PostgresStore } from '../../../src/dedup/postgres-store';
import type { SqlResult } from '../../../src/internal/connections/sql-client';
import { after, fakePool, never, result, storeOpener } from '../../support/fake-pg';

/**
 * The PostgreSQL store's own logic against a scripted pool: the statements it sends and their
 * parameters, how it reads their answers, its timeouts, and what it does with the connections it
 * borrows. What PostgreSQL does with the statements is tested against a real server in
 * test/postgres/.
 */
// Made in a hook, not at load: a mutant that breaks statements() then fails tests instead of the file.
let sql: Statements;
// A prune run's statements: the store's table, then the parking lot's two.
let prunes: string[];
beforeAll(() => {
  sql = statements('svc_webhook_deliveries');
  prunes = [sql.prune, ...parkingStatements('svc_webhook_deliveries').prune];
});

const open = storeOpener();

const claimRow = (claimed: boolean, done: boolean) => () => result([{ claimed, done }]);

describe('postgres store statements', () => {
  it('claims with one statement: the id, a new token and the lease rounded up', async () => {
    const { store, sent } = open({ answer: claimRow(true, false) });
    const claim = await store.claim('d1', 1500.2);
    expect(claim.state).toBe('claimed');
    const { token } = claim as { token: string };
    expect(token).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(sent).toEqual([{ text: sql.claim, values: ['d1', token, 1501], client: 0 }]);
  });

  it('gives each claim its own token', async () => {
    const { store } = open({ answer: claimRow(true, false) });
    const [a, b] = await Promise.all([store.claim('x', 1000), store.claim('x', 1000)]);
    expect((a as { token: string }).token).not.toBe((b as { token: string }).token);
  });

  it.each([
    ['a row that was already done', [{ claimed: false, done: true }], 'done'],
    ['a row another attempt holds', [{ claimed: false, done: false }], 'busy'],
    ['no row at all', [], 'busy'],
  ])('reads %s as %s', async (_what, rows, state) => {
    const { store } = open({ answer: () => result(rows) });
    expect(await store.claim('d', 1000)).toEqual({ state });
  });

  it('sends the row key of an id too long for the index, for every statement', async () => {
    const long = 'x'.repeat(201);
    const { store, sent } = open({ answer: claimRow(true, false) });
    const { token } = (await store.claim(long, 10)) as { token: string };
    await store.extend(long, token, 10);
    await store.commit(long, token);
    await store.release(long, token);
    expect(store.doneMark(long, token).values[0]).toBe(rowKey(long));
    expect(sent.map((q) => q.values![0])).toEqual(Array(4).fill(rowKey(long)));
    expect(rowKey(long)).not.toBe(long);
  });

  it('commits with the id, the token and the retention rounded up', async () => {
    const { store, sent } = open({}, { retentionMs: 1000.5 });
    await store.commit('d', 'tok');
    expect(sent).toEqual([{ text: sql.commit, values: ['d', 'tok', 1001], client: 0 }]);
  });

  it('keeps handled ids for a day plus an hour by default', async () => {
    const { store, sent } = open();
    expect(store.retentionMs).toBe(DEFAULT_RETENTION_MS);
    await store.commit('d', 'tok');
    expect(sent[0]!.values).toEqual(['d', 'tok', DEFAULT_RETENTION_MS]);
  });

  it('releases with the id and the token', async () => {
    const { store, sent } = open();
    await store.release('d', 'tok');
    expect(sent).toEqual([{ text: sql.release, values: ['d', 'tok'], client: 0 }]);
  });

  it('extends with the id, the token and the lease rounded up', async () => {
    const { store, sent } = open();
    await store.extend('d', 'tok', 2000.1);
    expect(sent).toEqual([{ text: sql.extend, values: ['d', 'tok', 2001], client: 0 }]);
  });

  it('uses the table it is given, quoted, in every statement', async () => {
    const mine = statements('hooks.Deliveries');
    const { store, texts } = open({ answer: claimRow(true, false) }, { table: 'hooks.Deliveries' });
    expect(store.table).toBe('"hooks"."Deliveries"');
    await store.claim('d', 10);
    await store.commit('d', 't');
    await store.release('d', 't');
    await store.extend('d', 't', 10);
    await store.prune();
    expect(texts()).toEqual([mine.claim, mine.commit, mine.release, mine.extend, mine.prune, ...parkingStatements('hooks.Deliveries').prune]);
    expect(store.doneMark('d', 't').text).toBe(mine.mark);
  });

  it('uses the table svc_webhook_deliveries by default', () => {
    const { store } = open();
    expect(store.table).toBe('"svc_webhook_deliveries"');
    expect(store.doneMark('d', 't').text).toBe(sql.mark);
  });

  it('gives the done mark for a transaction of your own: the mark statement with the id, the token and the retention rounded up', () => {
    const { store, sent } = open({}, { retentionMs: 5000.5 });
    expect(store.doneMark('d', 'tok')).toEqual({ text: sql.mark, values: ['d', 'tok', 5001] });
    expect(sent).toEqual([]);
  });
});

describe('postgres store connections', () => {
  it('borrows a connection for each statement and gives it back to be reused', async () => {
    const { store, clients } = open();
    await store.release('a', 't');
    await store.release('b', 't');
    expect(clients).toHaveLength(2);
    for (const client of clients) expect(client.release.mock.calls).toEqual([[false]]);
  });

  it('listens for `error` on a connection while it holds it, with a listener that swallows the error, and stops when it gives it back', async () => {
    const { store, clients } = open();
    await store.release('a', 't');
    const [client] = clients;
    expect(client!.on).toHaveBeenCalledTimes(1);
    const [event, listener] = client!.on.mock.calls[0] as [string, (err: Error) => void];
    expect(event).toBe('error');
    expect(() => listener(new Error('server went away'))).not.toThrow();
    expect(client!.off.mock.calls).toEqual([['error', listener]]);
  });

  it('works with connections that have no on() or off()', async () => {
    const { store, clients } = open({
      connect: (client) => {
        const { on: _on, off: _off, ...bare } = client;
        return Promise.resolve(bare as typeof client);
      },
    });
    await store.release('a', 't');
    expect(clients[0]!.release).toHaveBeenCalledWith(false);
  });

  it('discards a connection whose statement failed as a lost connection, and rejects with that error as is', async () => {
    const lost = Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    const { store, clients } = open({ answer: () => Promise.reject(lost) });
    await expect(store.commit('d', 't')).rejects.toBe(lost);
    expect(clients[0]!.release.mock.calls).toEqual([[true]]);
  });

  it('keeps a connection whose statement failed on its own, and rejects with that error as is', async () => {
    const refused = Object.assign(new Error('check violation'), { code: '23514' });
    const { store, clients } = open({ answer: () => Promise.reject(refused) });
    await expect(store.extend('d', 't', 10)).rejects.toBe(refused);
    expect(clients[0]!.release.mock.calls).toEqual([[false]]);
  });

  it('fails a statement whose query throws at once like one that rejects, and gives its connection back', async () => {
    const broken = new TypeError('Client was passed a null or undefined query');
    const { store, clients } = open();
    const failing = store.claim('d', 10);
    clients[0]?.query.mockImplementation(() => {
      throw broken;
    });
    await expect(failing).rejects.toBe(broken);
    expect(clients[0]!.release.mock.calls).toEqual([[false]]);
  });

  it('passes on what a failed statement rejects with even when it is no error', async () => {
    const { store } = open({ answer: () => Promise.reject(null) });
    await expect(store.release('d', 't')).rejects.toBeNull();
  });

  it("rejects with the pool's own error when no connection can be had", async () => {
    const refused = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    const { store, sent } = open({ connect: () => Promise.reject(refused) });
    await expect(store.claim('d', 10)).rejects.toBe(refused);
    expect(sent).toEqual([]);
  });

  it('says the migration is missing when the table does not exist (SQLSTATE 42P01), keeping the error as the cause', async () => {
    const missing = Object.assign(new Error('relation does not exist'), { code: '42P01' });
    const { store } = open({ answer: () => Promise.reject(missing) });
    const err = await store.claim('d', 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBe(missing);
    expect((err as Error).cause).toBe(missing);
  });

  it('gives back a connection that its holder already gave back without failing the statement', async () => {
    const { store, clients } = open({
      connect: (client) => {
        client.release.mockImplementation(() => {
          throw new Error('Release called on client which has already been released to the pool.');
        });
        return Promise.resolve(client);
      },
    });
    await expect(store.release('d', 't')).resolves.toBeUndefined();
    expect(clients[0]!.release).toHaveBeenCalledTimes(1);
  });
});

describe('postgres store timeouts', () => {
  beforeEach(async () => {
    jest.useFakeTimers();
    // A clock that has run a while, as performance.now() has in a process that serves deliveries.
    await jest.advanceTimersByTimeAsync(60_000);
  });
  afterEach(() => jest.useRealTimers());

  it('fails a statement unanswered for commandTimeoutMs, not a moment earlier', async () => {
    const { store } = open({ answer: never }, { commandTimeoutMs: 250 });
    const outcome = jest.fn();
    store.commit('d', 'tok').then(() => outcome('resolved'), outcome);
    await jest.advanceTimersByTimeAsync(249);
    expect(outcome).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome).toHaveBeenCalledWith(expect.any(StoreTimeoutError));
  });

  describe('the connection of a statement that timed out', () => {
    // A server that was only slow or stopped for a moment keeps its warm connections: discarding
    // them made every waiting delivery open a new one at once, a storm that outlasted the stop.
    const failAfter = (ms: number, code: string) => new Promise<never>((_, reject) => setTimeout(() => reject(Object.assign(new Error(code), { code })), ms));
    const timedOut = async (outcome: Promise<unknown>) => {
      const caught = outcome.then(
        () => 'resolved',
        (err: unknown) => err,
      );
      await jest.advanceTimersByTimeAsync(250);
      expect(await caught).toBeInstanceOf(StoreTimeoutError);
    };

    it('is kept aside while the statement runs, and given back to be reused once it answers', async () => {
      const { store, clients } = open({ answer: () => after(400, result()) }, { commandTimeoutMs: 250 });
      await timedOut(store.commit('d', 'tok'));
      expect(clients[0]!.release).not.toHaveBeenCalled();
      expect(clients[0]!.off).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(149);
      expect(clients[0]!.release).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      expect(clients[0]!.release.mock.calls).toEqual([[false]]);
      expect(clients[0]!.off).toHaveBeenCalledWith('error', clients[0]!.on.mock.calls[0]![1]);
    });

    it('is given back to be reused when the statement then fails on its own', async () => {
      const { store, clients } = open({ answer: () => failAfter(400, '40P01') }, { commandTimeoutMs: 250 });
      await timedOut(store.release('d', 'tok'));
      await jest.advanceTimersByTimeAsync(150);
      expect(clients[0]!.release.mock.calls).toEqual([[false]]);
    });

    it('is discarded when the statement then fails as a lost connection', async () => {
      const { store, clients } = open({ answer: () => failAfter(400, 'ECONNRESET') }, { commandTimeoutMs: 250 });
      await timedOut(store.extend('d', 'tok', 10));
      await jest.advanceTimersByTimeAsync(150);
      expect(clients[0]!.release.mock.calls).toEqual([[true]]);
    });

    it('is discarded, once, when the statement still runs ten times commandTimeoutMs after it timed out', async () => {
      const { store, clients } = open({ answer: () => after(3_000, result()) }, { commandTimeoutMs: 250 });
      await timedOut(store.claim('d', 10));
      await jest.advanceTimersByTimeAsync(2_499);
      expect(clients[0]!.release).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      expect(clients[0]!.release.mock.calls).toEqual([[true]]);
      await jest.advanceTimersByTimeAsync(1_000);
      expect(clients[0]!.release.mock.calls).toEqual([[true]]);
    });

    it('does not keep the process alive while it waits', async () => {
      const unref = jest.fn();
      const fake = setTimeout;
      const spy = jest
        .spyOn(global, 'setTimeout')
        .mockImplementation(((fn: () => void, ms?: number) => Object.assign(fake(fn, ms), { unref })) as unknown as typeof setTimeout);
      try {
        const { store } = open({ answer: never }, { commandTimeoutMs: 250 });
        const caught = store.commit('d', 'tok').catch(() => 'timed out');
        expect(unref).not.toHaveBeenCalled();
        await jest.advanceTimersByTimeAsync(250);
        await expect(caught).resolves.toBe('timed out');
        expect(unref).toHaveBeenCalledTimes(1);
      } finally {
        spy.mockRestore();
      }
    });
  });

  it('waits 1 s by default', async () => {
    const { store } = open({ answer: never });
    const outcome = jest.fn();
    store.release('d', 'tok').catch(outcome);
    await jest.advanceTimersByTimeAsync(999);
    expect(outcome).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome).toHaveBeenCalledWith(expect.any(StoreTimeoutError));
  });

  it("counts the wait for a connection in the statement's time", async () => {
    const { store } = open({ connect: (client) => after(200, client), answer: never }, { commandTimeoutMs: 300 });
    const outcome = jest.fn();
    store.extend('d', 'tok', 10).catch(outcome);
    await jest.advanceTimersByTimeAsync(299);
    expect(outcome).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome).toHaveBeenCalledWith(expect.any(StoreTimeoutError));
  });

  it('takes an answer that comes after a slow connection but within the time left', async () => {
    const { store } = open(
      { connect: (client) => after(200, client), answer: () => after(90, result([{ claimed: true, done: false }])) },
      { commandTimeoutMs: 300 },
    );
    const claim = store.claim('d', 10);
    await jest.advanceTimersByTimeAsync(290);
    expect((await claim).state).toBe('claimed');
  });

  it('fails when no connection comes within commandTimeoutMs, and gives back the one that comes late unused', async () => {
    const { store, clients, sent } = open({ connect: (client) => after(500, client) }, { commandTimeoutMs: 300 });
    const outcome = jest.fn();
    store.claim('d', 10).catch(outcome);
    await jest.advanceTimersByTimeAsync(299);
    expect(outcome).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome).toHaveBeenCalledWith(expect.any(StoreTimeoutError));
    expect(clients[0]!.release).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(200);
    expect(clients[0]!.release.mock.calls).toEqual([[false]]);
    expect(sent).toEqual([]);
  });
});

describe('postgres store pruning', () => {
  // Answers the store's own prune as scripted, and the parking lot's with no rows deleted.
  const ownOnly = (answer: () => SqlResult | Promise<SqlResult>) => (query: { text: string }) => (query.text === sql.prune ? answer() : result([], 0));
  const own = (sent: ReadonlyArray<{ text: string }>) => sent.filter((q) => q.text === sql.prune);

  it('deletes expired rows in one batch of at most 1000, resolving to the number deleted', async () => {
    const { store, sent } = open({ answer: ownOnly(() => result([], 7)) });
    expect(await store.prune()).toBe(7);
    expect(sent).toEqual(prunes.map((text, client) => ({ text, values: [1000], client })));
  });

  it("adds the parking lot's expired rows to the count", async () => {
    const counts = [3, 1000, 2, 5];
    const { store, sent } = open({ answer: () => result([], counts.shift()!) });
    expect(await store.prune()).toBe(1010);
    expect(sent.map((q) => q.text)).toEqual([prunes[0], prunes[1], prunes[1], prunes[2]]);
  });

  it('goes on with another batch while a batch was full, and adds them up', async () => {
    const counts = [1000, 1000, 999];
    const { store, sent } = open({ answer: ownOnly(() => result([], counts.shift()!)) });
    expect(await store.prune()).toBe(2999);
    expect(own(sent)).toHaveLength(3);
  });

  it('reads a batch without a row count as none deleted, and stops', async () => {
    const counts = [1000, null];
    const { store, sent } = open({ answer: ownOnly(() => result([], counts.shift()!)) });
    expect(await store.prune()).toBe(1000);
    expect(own(sent)).toHaveLength(2);
  });

  it('shares one run between calls made while it runs, and runs anew after it ended', async () => {
    const { store, sent } = open({ answer: ownOnly(() => result([], 3)) });
    const [a, b] = [store.prune(), store.prune()];
    expect(b).toBe(a);
    expect(await a).toBe(3);
    expect(await store.prune()).toBe(3);
    expect(own(sent)).toHaveLength(2);
  });

  it('ends a failed run too, so that the next call tries again', async () => {
    let fail = true;
    const { store } = open({ answer: ownOnly(() => (fail ? Promise.reject(new Error('down')) : result([], 2))) });
    await expect(store.prune()).rejects.toThrow('down');
    fail = false;
    expect(await store.prune()).toBe(2);
  });

  describe('on its own', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('lets other work run between batches', async () => {
      const counts = [1000, 0];
      const { store, sent } = open({ answer: ownOnly(() => result([], counts.shift()!)) });
      const run = store.prune();
      for (let i = 0; i < 10; i++) await Promise.resolve();
      expect(sent).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(0);
      expect(own(sent)).toHaveLength(2);
      expect(await run).toBe(1000);
    });

    it('prunes every 10 minutes by default', async () => {
      const { texts } = open({ answer: () => result([], 0) });
      await jest.advanceTimersByTimeAsync(10 * 60_000 - 1);
      expect(texts()).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      expect(texts()).toEqual(prunes);
      await jest.advanceTimersByTimeAsync(10 * 60_000);
      expect(texts()).toEqual([...prunes, ...prunes]);
    });

    it('prunes every pruneIntervalMs, and stops on close()', async () => {
      const { store, texts } = open({ answer: () => result([], 0) }, { pruneIntervalMs: 50 });
      await jest.advanceTimersByTimeAsync(100);
      expect(texts()).toEqual([...prunes, ...prunes]);
      await store.close();
      await jest.advanceTimersByTimeAsync(500);
      expect(texts()).toHaveLength(6);
    });

    it('does not keep the process alive for its pruning', () => {
      const setIntervalSpy = jest.spyOn(global, 'setInterval');
      try {
        open();
        const timer = setIntervalSpy.mock.results[0]!.value as NodeJS.Timeout;
        expect(timer.hasRef()).toBe(false);
      } finally {
        setIntervalSpy.mockRestore();
      }
    });

    it('reports a failed prune to the logger as a warning with the error, and tries again next time', async () => {
      const warn = jest.fn();
      const failure = Object.assign(new Error('down'), { code: 'ECONNREFUSED' });
      const { texts } = open({ answer: () => Promise.reject(failure) }, { pruneIntervalMs: 50, logger: { warn } });
      await jest.advanceTimersByTimeAsync(50);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]![0]).toEqual({ err: expect.objectContaining({ code: 'ECONNREFUSED' }) });
      expect(warn.mock.calls[0]![0].err).toBeInstanceOf(Error);
      await jest.advanceTimersByTimeAsync(50);
      expect(warn).toHaveBeenCalledTimes(2);
      expect(texts()).toHaveLength(2);
    });

    it('lets a failed prune pass quietly without a logger', async () => {
      const { texts } = open({ answer: () => Promise.reject(new Error('down')) }, { pruneIntervalMs: 50 });
      await jest.advanceTimersByTimeAsync(50);
      expect(texts()).toEqual([sql.prune]);
    });
  });
});

describe('postgres store options', () => {
  it('needs exactly one of `pool` or `connectionString`', () => {
    const { pool } = fakePool();
    expect(() => postgresStore({})).toThrow(TypeError);
    expect(() => postgresStore({ pool, connectionString: 'postgres://localhost/db' })).toThrow(TypeError);
  });

  it('needs its options as an object', () => {
    const { pool } = fakePool();
    expect(() => postgresStore(undefined as never)).toThrow(TypeError);
    expect(() => postgresStore(Object.assign(() => undefined, { pool }) as never)).toThrow(TypeError);
  });

  it('is a PostgresStore', () => {
    expect(open().store).toBeInstanceOf(PostgresStore);
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses commandTimeoutMs, retentionMs and pruneIntervalMs of %p', (bad) => {
    const { pool } = fakePool();
    expect(() => postgresStore({ pool, commandTimeoutMs: bad })).toThrow(RangeError);
    expect(() => postgresStore({ pool, retentionMs: bad })).toThrow(RangeError);
    expect(() => postgresStore({ pool, pruneIntervalMs: bad })).toThrow(RangeError);
  });

  it('refuses a commandTimeoutMs or pruneIntervalMs longer than a timer can wait (2^31 - 1 ms)', () => {
    const { pool } = fakePool();
    expect(() => postgresStore({ pool, commandTimeoutMs: 2 ** 31 })).toThrow(RangeError);
    expect(() => postgresStore({ pool, pruneIntervalMs: 2 ** 31 })).toThrow(RangeError);
  });

  it('accepts the longest timer, small positive numbers, and a retention longer than a timer', () => {
    expect(() => open({}, { commandTimeoutMs: 2 ** 31 - 1, pruneIntervalMs: 2 ** 31 - 1 })).not.toThrow();
    expect(open({}, { commandTimeoutMs: 0.5, pruneIntervalMs: 0.5, retentionMs: 0.5 }).store.retentionMs).toBe(0.5);
    expect(open({}, { retentionMs: 2 ** 40 }).store.retentionMs).toBe(2 ** 40);
  });

  it('refuses a table name that is not a plain identifier', () => {
    const { pool } = fakePool();
    expect(() => postgresStore({ pool, table: 'x; DROP TABLE y' })).toThrow(TypeError);
  });

  it('leaves a pool it was given open on close()', async () => {
    const { store, pool } = open();
    await store.close();
    expect(pool.end).not.toHaveBeenCalled();
  });
});
