import { SvcWebhookError } from '../../../src/errors';
import { CLAIM_LOST_MARKER, rowKey, statements, type Statements } from '../../../src/dedup/postgres-sql';
import type { SqlClient } from '../../../src/internal/connections/sql-client';
import { handlerFailure } from '../../../src/receive/handler-failure';
import { after, never, result, storeOpener, type FakePoolScript, type SentQuery } from '../../support/fake-pg';

/**
 * `store.transaction` (what `ctx.transaction` runs) against a scripted pool: the statements around
 * the handler's work, what it does with its connection when something fails, and how it answers
 * each failure. What PostgreSQL does with them is tested against a real server in
 * test/postgres/transaction.test.ts.
 */
// Made in a hook, not at load: a mutant that breaks statements() then fails tests instead of the file.
let sql: Statements;
beforeAll(() => {
  sql = statements('svc_webhook_deliveries');
});

const open = storeOpener();

/** Answers every statement with no rows, except those `failing` picks, which get what it returns. */
function failing(pick: (query: SentQuery) => Promise<never> | undefined): FakePoolScript['answer'] {
  return (query) => pick(query) ?? result();
}

const isMark = (q: SentQuery) => q.text === sql.mark;
const writes = async (tx: SqlClient) => {
  await tx.query('INSERT INTO effects (note) VALUES ($1)', ['written']);
  return 'the result';
};
const lost = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
const claimLost = () =>
  Object.assign(new Error(`invalid input syntax for type integer: "${CLAIM_LOST_MARKER}: this attempt no longer holds the delivery (0 rows)"`), {
    code: '22P02',
  });

describe('postgres store transaction', () => {
  it('runs BEGIN, the work on the same connection, the done mark with the retention rounded up, and COMMIT; resolving to what the work returns', async () => {
    const { store, sent, clients } = open({}, { retentionMs: 60_000.5 });
    await expect(store.transaction('d1', 'tok', writes)).resolves.toBe('the result');
    expect(sent).toEqual([
      { text: 'BEGIN', client: 0 },
      { text: 'INSERT INTO effects (note) VALUES ($1)', values: ['written'], client: 0 },
      { text: sql.mark, values: ['d1', 'tok', 60_001], client: 0 },
      { text: 'COMMIT', client: 0 },
    ]);
    expect(clients).toHaveLength(1);
    expect(clients[0]!.release.mock.calls).toEqual([[false]]);
  });

  it('marks the row key of an id too long for the index', async () => {
    const long = 'y'.repeat(300);
    const { store, sent } = open();
    await store.transaction(long, 'tok', () => undefined);
    expect(sent.find(isMark)!.values).toEqual([rowKey(long), 'tok', expect.any(Number)]);
  });

  it('listens for `error` on its connection while it holds it, and stops when it gives it back', async () => {
    const { store, clients } = open();
    await store.transaction('d', 'tok', () => undefined);
    const [client] = clients;
    expect(client!.on).toHaveBeenCalledWith('error', expect.any(Function));
    expect(client!.off).toHaveBeenCalledWith('error', client!.on.mock.calls[0]![1]);
  });

  describe('after it committed', () => {
    it("makes the receiver's commit that follows cost no statement, once", async () => {
      const { store, texts } = open();
      await store.transaction('d', 'tok', () => undefined);
      const before = texts().length;
      await store.commit('d', 'tok');
      expect(texts()).toHaveLength(before);
      await store.commit('d', 'tok');
      expect(texts().slice(before)).toEqual([sql.commit]);
    });

    it('makes a release that follows cost no statement either: the row is done and holds no token', async () => {
      const { store, texts } = open();
      await store.transaction('d', 'tok', () => undefined);
      const before = texts().length;
      await store.release('d', 'tok');
      expect(texts()).toHaveLength(before);
      await store.release('d', 'tok');
      expect(texts().slice(before)).toEqual([sql.release]);
    });

    it('still commits another delivery, or the same one under another token', async () => {
      const { store, sent } = open();
      await store.transaction('d', 'tok', () => undefined);
      const before = sent.length;
      await store.commit('other', 'tok');
      await store.commit('d', 'other token');
      await store.release('other', 'tok');
      expect(sent.slice(before).map((q) => [q.text, q.values!.slice(0, 2)])).toEqual([
        [sql.commit, ['other', 'tok']],
        [sql.commit, ['d', 'other token']],
        [sql.release, ['other', 'tok']],
      ]);
    });
  });

  describe('when the work fails', () => {
    it('rolls back, keeps the connection, and throws what the work threw as is', async () => {
      const thrown = new Error('the handler failed');
      const { store, texts, clients } = open();
      await expect(
        store.transaction('d', 'tok', async (tx) => {
          await tx.query('SELECT 1');
          throw thrown;
        }),
      ).rejects.toBe(thrown);
      expect(texts()).toEqual(['BEGIN', 'SELECT 1', 'ROLLBACK']);
      expect(clients[0]!.release.mock.calls).toEqual([[false]]);
    });

    it.each([
      ['null', null],
      ['an object whose message is no text', { message: 42 }],
      ['a SvcWebhookError of its own', new SvcWebhookError('store_unavailable', 'made by the handler')],
    ])('throws %s as is', async (_what, thrown) => {
      const { store } = open();
      const err = await store.transaction('d', 'tok', () => Promise.reject(thrown)).catch((e: unknown) => e);
      expect(err).toBe(thrown);
      expect(handlerFailure(err).code).toBe('handler_failed');
    });

    it("leaves the receiver's commit to record the delivery (nothing was marked)", async () => {
      const { store, texts } = open();
      await store.transaction('d', 'tok', () => Promise.reject(new Error('no'))).catch(() => undefined);
      await store.commit('d', 'tok');
      expect(texts().at(-1)).toBe(sql.commit);
    });

    it('discards the connection when the rollback fails', async () => {
      const thrown = new Error('the handler failed');
      const { store, clients } = open({ answer: failing((q) => (q.text === 'ROLLBACK' ? Promise.reject(new Error('rollback refused')) : undefined)) });
      await expect(store.transaction('d', 'tok', () => Promise.reject(thrown))).rejects.toBe(thrown);
      expect(clients[0]!.release.mock.calls).toEqual([[true]]);
    });

    it('answers a lost connection as store_unavailable (503, retry after 5 s), sending no rollback and discarding the connection', async () => {
      const failure = lost();
      const { store, texts, clients } = open();
      const err = await store.transaction('d', 'tok', () => Promise.reject(failure)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SvcWebhookError);
      expect(err).toMatchObject({ code: 'store_unavailable', status: 503, retryAfter: 5, cause: failure });
      expect(handlerFailure(err)).toBe(err);
      expect(texts()).toEqual(['BEGIN']);
      expect(clients[0]!.release.mock.calls).toEqual([[true]]);
    });
  });

  describe('when the claim was lost to another attempt', () => {
    it('rolls back and answers delivery_in_progress (409, retry after 5 s), keeping the connection', async () => {
      const failure = claimLost();
      const { store, texts, clients } = open({ answer: failing((q) => (isMark(q) ? Promise.reject(failure) : undefined)) });
      const err = await store.transaction('d', 'tok', writes).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SvcWebhookError);
      expect(err).toMatchObject({ code: 'delivery_in_progress', status: 409, retryAfter: 5, cause: failure });
      expect(handlerFailure(err)).toBe(err);
      expect(texts()).toEqual(['BEGIN', 'INSERT INTO effects (note) VALUES ($1)', sql.mark, 'ROLLBACK']);
      expect(clients[0]!.release.mock.calls).toEqual([[false]]);
    });

    it("leaves the receiver's commit to its token check", async () => {
      const { store, texts } = open({ answer: failing((q) => (isMark(q) ? Promise.reject(claimLost()) : undefined)) });
      await store.transaction('d', 'tok', () => undefined).catch(() => undefined);
      await store.commit('d', 'tok');
      expect(texts().at(-1)).toBe(sql.commit);
    });
  });

  describe('when the database cannot be reached', () => {
    it('answers a refused connection as store_unavailable, sending nothing', async () => {
      const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      const work = jest.fn();
      const { store, sent } = open({ connect: () => Promise.reject(refused) });
      await expect(store.transaction('d', 'tok', work)).rejects.toMatchObject({ code: 'store_unavailable', status: 503, cause: refused });
      expect(work).not.toHaveBeenCalled();
      expect(sent).toEqual([]);
    });

    it("throws a pool's other failure to lend a connection as is", async () => {
      const ended = new Error('Cannot use a pool after calling end on the pool');
      const { store } = open({ connect: () => Promise.reject(ended) });
      await expect(store.transaction('d', 'tok', () => undefined)).rejects.toBe(ended);
    });

    it('answers a connection lost at BEGIN as store_unavailable, without running the work', async () => {
      const work = jest.fn();
      const { store, texts, clients } = open({ answer: failing((q) => (q.text === 'BEGIN' ? Promise.reject(lost()) : undefined)) });
      await expect(store.transaction('d', 'tok', work)).rejects.toMatchObject({ code: 'store_unavailable' });
      expect(work).not.toHaveBeenCalled();
      expect(texts()).toEqual(['BEGIN']);
      expect(clients[0]!.release.mock.calls).toEqual([[true]]);
    });

    it("answers a connection lost at COMMIT as store_unavailable, and leaves the receiver's commit to run", async () => {
      const { store, texts, clients } = open({ answer: failing((q) => (q.text === 'COMMIT' ? Promise.reject(lost()) : undefined)) });
      await expect(store.transaction('d', 'tok', () => undefined)).rejects.toMatchObject({ code: 'store_unavailable' });
      expect(clients[0]!.release.mock.calls).toEqual([[true]]);
      await store.commit('d', 'tok');
      expect(texts().at(-1)).toBe(sql.commit);
    });
  });

  describe('time limits', () => {
    beforeEach(async () => {
      jest.useFakeTimers();
      // A clock that has run a while, as performance.now() has in a process that serves deliveries.
      await jest.advanceTimersByTimeAsync(60_000);
    });
    afterEach(() => jest.useRealTimers());

    async function outcomeAt(run: Promise<unknown>, ms: number) {
      const outcome = jest.fn();
      run.then(() => outcome('resolved'), outcome);
      await jest.advanceTimersByTimeAsync(ms - 1);
      expect(outcome).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      expect(outcome).toHaveBeenCalledTimes(1);
      return outcome.mock.calls[0]![0] as unknown;
    }

    describe.each(['BEGIN', 'mark', 'COMMIT'])('when %s is unanswered for commandTimeoutMs', (step) => {
      // A server that was only slow or stopped for a moment keeps its warm connections (as for the
      // store's own statements): the connection waits aside for the statement, then is rolled back.
      const isStep = (q: SentQuery) => (step === 'mark' ? isMark(q) : q.text === step);
      const stepAnswers = (answer: () => Promise<never> | Promise<unknown>) =>
        open({ answer: (q) => (isStep(q) ? (answer() as ReturnType<NonNullable<FakePoolScript['answer']>>) : result()) }, { commandTimeoutMs: 300 });
      const failAfter = (ms: number, code: string) => after(ms).then(() => Promise.reject(Object.assign(new Error(code), { code })));

      it('fails as store_unavailable then, without waiting for it, keeping the connection aside un-rolled-back', async () => {
        const { store, texts, clients } = stepAnswers(never);
        const err = await outcomeAt(
          store.transaction('d', 'tok', () => undefined),
          300,
        );
        expect(err).toMatchObject({ code: 'store_unavailable', status: 503 });
        expect(texts()).not.toContain('ROLLBACK');
        expect(clients[0]!.release).not.toHaveBeenCalled();
      });

      it('rolls the connection back once the statement answers, and gives it back to be reused', async () => {
        const { store, texts, clients } = stepAnswers(() => after(400, result()));
        await outcomeAt(
          store.transaction('d', 'tok', () => undefined),
          300,
        );
        await jest.advanceTimersByTimeAsync(99);
        expect(texts()).not.toContain('ROLLBACK');
        await jest.advanceTimersByTimeAsync(1);
        expect(texts().at(-1)).toBe('ROLLBACK');
        expect(clients[0]!.release.mock.calls).toEqual([[false]]);
      });

      it('rolls back and gives the connection back when the statement then fails on its own', async () => {
        const { store, texts, clients } = stepAnswers(() => failAfter(400, '40P01'));
        await outcomeAt(
          store.transaction('d', 'tok', () => undefined),
          300,
        );
        await jest.advanceTimersByTimeAsync(100);
        expect(texts().at(-1)).toBe('ROLLBACK');
        expect(clients[0]!.release.mock.calls).toEqual([[false]]);
      });

      it('discards the connection, sending no rollback, when the statement then fails as a lost connection', async () => {
        const { store, texts, clients } = stepAnswers(() => failAfter(400, 'ECONNRESET'));
        await outcomeAt(
          store.transaction('d', 'tok', () => undefined),
          300,
        );
        await jest.advanceTimersByTimeAsync(100);
        expect(texts()).not.toContain('ROLLBACK');
        expect(clients[0]!.release.mock.calls).toEqual([[true]]);
      });

      it('discards the connection, once, when the statement still runs ten times commandTimeoutMs after it timed out', async () => {
        const { store, texts, clients } = stepAnswers(never);
        await outcomeAt(
          store.transaction('d', 'tok', () => undefined),
          300,
        );
        await jest.advanceTimersByTimeAsync(2_999);
        expect(clients[0]!.release).not.toHaveBeenCalled();
        await jest.advanceTimersByTimeAsync(1);
        expect(clients[0]!.release.mock.calls).toEqual([[true]]);
        await jest.advanceTimersByTimeAsync(3_000);
        expect(clients[0]!.release.mock.calls).toEqual([[true]]);
        expect(texts()).not.toContain('ROLLBACK');
      });

      it('discards the connection when the rollback that follows fails', async () => {
        const { store, clients } = open(
          { answer: (q) => (isStep(q) ? after(400, result()) : q.text === 'ROLLBACK' ? Promise.reject(new Error('rollback refused')) : result()) },
          { commandTimeoutMs: 300 },
        );
        await outcomeAt(
          store.transaction('d', 'tok', () => undefined),
          300,
        );
        await jest.advanceTimersByTimeAsync(100);
        expect(clients[0]!.release.mock.calls).toEqual([[true]]);
      });

      it('discards the connection when the rollback that follows is still unanswered at the same bound', async () => {
        const { store, texts, clients } = open(
          { answer: (q) => (isStep(q) ? after(400, result()) : q.text === 'ROLLBACK' ? never() : result()) },
          { commandTimeoutMs: 300 },
        );
        await outcomeAt(
          store.transaction('d', 'tok', () => undefined),
          300,
        );
        await jest.advanceTimersByTimeAsync(100);
        expect(texts().at(-1)).toBe('ROLLBACK');
        await jest.advanceTimersByTimeAsync(2_899);
        expect(clients[0]!.release).not.toHaveBeenCalled();
        await jest.advanceTimersByTimeAsync(1);
        expect(clients[0]!.release.mock.calls).toEqual([[true]]);
      });
    });

    it('gives each statement the whole commandTimeoutMs, and the work as long as it takes', async () => {
      const { store } = open({ answer: () => after(250, result()) }, { commandTimeoutMs: 300 });
      const run = store.transaction('d', 'tok', () => after(5000, 'slow work'));
      await jest.advanceTimersByTimeAsync(250 + 5000 + 250 + 250);
      await expect(run).resolves.toBe('slow work');
    });

    describe('when the rollback after a failed work is unanswered for commandTimeoutMs', () => {
      const thrown = new Error('the handler failed');
      const rollbackAnswers = (answer: () => Promise<never> | Promise<unknown>) =>
        open(
          { answer: (q) => (q.text === 'ROLLBACK' ? (answer() as ReturnType<NonNullable<FakePoolScript['answer']>>) : result()) },
          { commandTimeoutMs: 300 },
        );

      it('throws what the work threw then, keeping the connection aside', async () => {
        const { store, clients } = rollbackAnswers(never);
        const err = await outcomeAt(
          store.transaction('d', 'tok', () => Promise.reject(thrown)),
          300,
        );
        expect(err).toBe(thrown);
        expect(clients[0]!.release).not.toHaveBeenCalled();
      });

      it('gives the connection back to be reused once the rollback answers', async () => {
        const { store, clients } = rollbackAnswers(() => after(400, result()));
        await outcomeAt(
          store.transaction('d', 'tok', () => Promise.reject(thrown)),
          300,
        );
        await jest.advanceTimersByTimeAsync(99);
        expect(clients[0]!.release).not.toHaveBeenCalled();
        await jest.advanceTimersByTimeAsync(1);
        expect(clients[0]!.release.mock.calls).toEqual([[false]]);
      });

      it('discards the connection when the rollback then fails, even on its own', async () => {
        const { store, clients } = rollbackAnswers(() => after(400).then(() => Promise.reject(Object.assign(new Error('refused'), { code: '40P01' }))));
        await outcomeAt(
          store.transaction('d', 'tok', () => Promise.reject(thrown)),
          300,
        );
        await jest.advanceTimersByTimeAsync(100);
        expect(clients[0]!.release.mock.calls).toEqual([[true]]);
      });

      it('discards the connection, once, when the rollback still runs ten times commandTimeoutMs after it timed out', async () => {
        const { store, clients } = rollbackAnswers(never);
        await outcomeAt(
          store.transaction('d', 'tok', () => Promise.reject(thrown)),
          300,
        );
        await jest.advanceTimersByTimeAsync(2_999);
        expect(clients[0]!.release).not.toHaveBeenCalled();
        await jest.advanceTimersByTimeAsync(1);
        expect(clients[0]!.release.mock.calls).toEqual([[true]]);
      });
    });

    it('waits for a connection up to commandTimeoutMs', async () => {
      const { store } = open({ connect: (client) => after(250, client) }, { commandTimeoutMs: 300 });
      const run = store.transaction('d', 'tok', () => 'done');
      await jest.advanceTimersByTimeAsync(250);
      await expect(run).resolves.toBe('done');
    });

    it('fails as store_unavailable when no connection comes within commandTimeoutMs, and gives back the late one unused', async () => {
      const work = jest.fn();
      const { store, clients, sent } = open({ connect: (client) => after(400, client) }, { commandTimeoutMs: 300 });
      const err = await outcomeAt(store.transaction('d', 'tok', work), 300);
      expect(err).toMatchObject({ code: 'store_unavailable', status: 503 });
      await jest.advanceTimersByTimeAsync(100);
      expect(clients[0]!.release.mock.calls).toEqual([[false]]);
      expect(sent).toEqual([]);
      expect(work).not.toHaveBeenCalled();
    });
  });

  it('gives back a connection the work already gave back itself without failing', async () => {
    const { store, clients } = open({
      connect: (client) => {
        client.release.mockImplementation(() => {
          throw new Error('Release called on client which has already been released to the pool.');
        });
        return Promise.resolve(client);
      },
    });
    await expect(store.transaction('d', 'tok', () => 'fine')).resolves.toBe('fine');
    expect(clients[0]!.release).toHaveBeenCalledTimes(1);
  });
});
