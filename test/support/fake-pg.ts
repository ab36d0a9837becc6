import { postgresStore, type PooledSqlClient, type PostgresPool, type PostgresStore, type PostgresStoreOptions } from '../../src/dedup/postgres-store';
import type { SqlResult } from '../../src/internal/connections/sql-client';

/** One statement as a client received it. */
export interface SentQuery {
  readonly text: string;
  readonly values?: unknown[];
  /** Which connection ran it (its index in `clients`). */
  readonly client: number;
}

export type FakeClient = PooledSqlClient & {
  query: jest.Mock;
  release: jest.Mock;
  on: jest.Mock;
  off: jest.Mock;
};

export interface FakePoolScript {
  /** What a statement answers: a result, or a promise of one (reject it for a failure). Default: no rows. */
  answer?: (query: SentQuery) => SqlResult | Promise<SqlResult>;
  /** How a connection is lent: default at once. */
  connect?: (client: FakeClient) => Promise<FakeClient>;
}

export const result = (rows: unknown[] = [], rowCount: number | null = rows.length): SqlResult => ({ rows, rowCount });

/** A promise that never settles: a database that does not answer. */
export const never = <T>() => new Promise<T>(() => undefined);

/** After `ms` of (fake) time. */
export const after = <T>(ms: number, value?: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value as T), ms));

/**
 * A scripted stand-in for a node-postgres Pool: every connection it lends records the statements
 * sent on it (in `sent`, across connections, in order) and answers them as scripted.
 */
export function fakePool(script: FakePoolScript = {}) {
  const sent: SentQuery[] = [];
  const clients: FakeClient[] = [];
  const answer = script.answer ?? (() => result());
  const lend = script.connect ?? ((client: FakeClient) => Promise.resolve(client));
  const pool = {
    connect: jest.fn((): Promise<PooledSqlClient> => {
      const index = clients.length;
      const client: FakeClient = {
        query: jest.fn((text: string, values?: unknown[]) => {
          const query: SentQuery = values === undefined ? { text, client: index } : { text, values, client: index };
          sent.push(query);
          return new Promise<SqlResult>((resolve) => resolve(answer(query)));
        }),
        release: jest.fn(),
        on: jest.fn(),
        off: jest.fn(),
      };
      clients.push(client);
      return lend(client);
    }),
    end: jest.fn(() => Promise.resolve()),
  } satisfies PostgresPool;
  return { pool, sent, clients, texts: () => sent.map((q) => q.text) };
}

/**
 * Opens stores on fake pools for the tests of a file, each closed after its test. Call it at the
 * top of a file: it registers the `afterEach`.
 */
export function storeOpener(): (script?: FakePoolScript, options?: Partial<PostgresStoreOptions>) => ReturnType<typeof fakePool> & { store: PostgresStore } {
  const opened: PostgresStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  return (script = {}, options = {}) => {
    const fake = fakePool(script);
    const store = postgresStore({ pool: fake.pool, ...options });
    opened.push(store);
    return { store, ...fake };
  };
}
