import { postgresMigrationSql, postgresStore, type PostgresStore, type PostgresStoreOptions } from '../../src';
import { PostgresServer } from '../support/postgres-server';

export interface TestDatabase {
  /** The running server (after beforeAll). */
  readonly server: PostgresServer;
  /** A store on the server's default table, closed after the file's tests. */
  store(options?: Partial<PostgresStoreOptions>): PostgresStore;
}

/**
 * For one test file: a real PostgreSQL started before its tests, with the store's table migrated and
 * `setup` statements run, and stopped after them with every store the tests opened.
 */
export function useDatabase(setup: readonly string[] = []): TestDatabase {
  let server: PostgresServer | undefined;
  const stores: PostgresStore[] = [];
  beforeAll(async () => {
    server = await PostgresServer.start();
    for (const statement of [postgresMigrationSql(), ...setup]) await server.query(statement);
  }, 30_000);
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await server?.close();
  });
  return {
    get server() {
      if (server === undefined) throw new Error('the database starts in beforeAll');
      return server;
    },
    store(options = {}) {
      const created = postgresStore({ connectionString: this.server.url, ...options });
      stores.push(created);
      return created;
    },
  };
}
