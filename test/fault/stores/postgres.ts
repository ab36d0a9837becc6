import { postgresMigrationSql, postgresStore } from '../../../src';
import { PostgresServer } from '../../support/postgres-server';
import type { KeyState, StoreKind, StoreServer } from '../store-kind';

/**
 * PostgreSQL, with the handlers' side effect written in ctx.transaction: one row in
 * `fault_effects` per run that commits, committed together with the delivery's done mark. The
 * run's verdict adds the rows: every delivery must have exactly one, whatever was killed when.
 */
class PostgresFaultServer implements StoreServer {
  readonly durability = 'WAL, synchronous_commit on, fsync off: a killed server loses no acknowledged COMMIT, the machine stays up';

  constructor(private readonly server: PostgresServer) {}

  get pid(): number {
    return this.server.pid ?? 0;
  }

  get receiverEnv(): Record<string, string> {
    return { FAULT_POSTGRES_URL: this.server.url };
  }

  freeze(): void {
    this.server.pause();
  }

  thaw(): void {
    this.server.unpause();
  }

  kill(): Promise<void> {
    return this.server.kill();
  }

  restart(): Promise<void> {
    return this.server.resume();
  }

  async states(ids: readonly string[]): Promise<Map<string, KeyState>> {
    const rows = await this.server.query<{ id: string; token: string | null }>(
      'SELECT id, token FROM svc_webhook_deliveries WHERE id = ANY($1) AND expires_at > now()',
      [ids],
    );
    const found = new Map(rows.map((r) => [r.id, r.token === null ? 'done' : 'claimed'] as const));
    return new Map(ids.map((id) => [id, found.get(id) ?? 'absent']));
  }

  async effectRows(ids: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.server.query<{ delivery_id: string; n: string }>(
      'SELECT delivery_id, count(*) AS n FROM fault_effects WHERE delivery_id = ANY($1) GROUP BY delivery_id',
      [ids],
    );
    const counts = new Map(rows.map((r) => [r.delivery_id, Number(r.n)]));
    return new Map(ids.map((id) => [id, counts.get(id) ?? 0]));
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

export const postgresKind: StoreKind = {
  name: 'postgres',
  async start() {
    const server = await PostgresServer.start();
    await server.query(postgresMigrationSql());
    await server.query('CREATE TABLE fault_effects (delivery_id text NOT NULL, pid int NOT NULL)');
    return new PostgresFaultServer(server);
  },
  open(env) {
    const connectionString = env.FAULT_POSTGRES_URL;
    if (connectionString === undefined) throw new Error('FAULT_POSTGRES_URL is not set');
    return postgresStore({ connectionString, commandTimeoutMs: 500 });
  },
  effect: (ctx, record, linger) =>
    ctx.transaction(async (tx) => {
      await tx.query('INSERT INTO fault_effects (delivery_id, pid) VALUES ($1, $2)', [ctx.deliveryId, process.pid]);
      record();
      // The handler's work after its write, still inside the transaction: kills land before COMMIT too.
      await linger();
    }),
};
