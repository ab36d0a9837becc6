import { sent, type PooledSqlClient } from '../../../src/dedup/postgres-connections';
import { result } from '../../support/fake-pg';

/** A connection whose query answers no rows and keeps the arguments of each call. */
function connection(query: (...args: unknown[]) => unknown = () => Promise.resolve(result())) {
  const calls: unknown[][] = [];
  const client = {
    query: (...args: unknown[]) => {
      calls.push(args);
      return query(...args);
    },
    release: () => undefined,
  } as unknown as PooledSqlClient;
  return { client, calls };
}

describe('a statement sent on a pooled connection', () => {
  it('is sent as its text alone when it has no parameters, as BEGIN, COMMIT and ROLLBACK are', async () => {
    const { client, calls } = connection();
    await sent(client, 'BEGIN');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toHaveLength(1);
    expect(calls[0]![0]).toBe('BEGIN');
  });

  it('is sent with its parameters when it has some', async () => {
    const { client, calls } = connection();
    await sent(client, 'SELECT $1', ['d']);
    expect(calls).toEqual([['SELECT $1', ['d']]]);
  });

  it("resolves to the connection's answer", async () => {
    const { client } = connection(() => Promise.resolve(result([{ claimed: true }])));
    await expect(sent(client, 'SELECT 1')).resolves.toEqual(result([{ claimed: true }]));
  });

  it('fails like a rejected query when the query throws at once', async () => {
    const thrown = new Error('Client was closed and is not queryable');
    const { client } = connection(() => {
      throw thrown;
    });
    await expect(sent(client, 'SELECT 1')).rejects.toBe(thrown);
  });
});
