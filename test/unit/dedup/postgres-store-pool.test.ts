import { Pool } from 'pg';
import { statements } from '../../../src/dedup/postgres-sql';
import { postgresStore } from '../../../src/dedup/postgres-store';
import { fakePool, result } from '../../support/fake-pg';

/** The pool the PostgreSQL store makes for itself from a connection string (pg mocked). */
jest.mock('pg', () => ({ Pool: jest.fn() }));
const PoolMock = Pool as unknown as jest.Mock;

function madePool() {
  const fake = fakePool({ answer: () => result([{ claimed: true, done: false }]) });
  const pool = Object.assign(fake.pool, { on: jest.fn() });
  PoolMock.mockImplementationOnce(() => pool);
  return { ...fake, pool };
}

describe('postgres store made from a connection string', () => {
  beforeEach(() => PoolMock.mockReset());

  it("makes a pg Pool for it whose connection attempts run on for 10 command timeouts, past the caller's deadline, and keep connections alive", async () => {
    madePool();
    await postgresStore({ connectionString: 'postgres://app@db/hooks', commandTimeoutMs: 700 }).close();
    expect(PoolMock.mock.calls).toEqual([[{ connectionString: 'postgres://app@db/hooks', connectionTimeoutMillis: 7000, keepAlive: true }]]);
    expect(PoolMock.mock.instances).toHaveLength(1);
  });

  it('lets a connection attempt run on for 10 s by default', async () => {
    madePool();
    await postgresStore({ connectionString: 'postgres://db' }).close();
    expect(PoolMock.mock.calls[0]![0]).toMatchObject({ connectionTimeoutMillis: 10_000 });
  });

  it('listens for `error` on the pool, so that an idle connection the server drops does not end the process', async () => {
    const { pool } = madePool();
    await postgresStore({ connectionString: 'postgres://db' }).close();
    expect(pool.on).toHaveBeenCalledTimes(1);
    const [event, listener] = pool.on.mock.calls[0] as [string, (err: Error) => unknown];
    expect(event).toBe('error');
    expect(() => listener(new Error('terminated'))).not.toThrow();
  });

  it('runs its statements on that pool, and ends the pool on close()', async () => {
    const { pool, texts } = madePool();
    const store = postgresStore({ connectionString: 'postgres://db' });
    expect((await store.claim('d', 10)).state).toBe('claimed');
    expect(texts()).toEqual([statements('svc_webhook_deliveries').claim]);
    expect(pool.end).not.toHaveBeenCalled();
    await store.close();
    expect(pool.end).toHaveBeenCalledTimes(1);
  });
});
