import type { SqlClient } from '../internal/connections/sql-client';
import type { ParkingLot } from './parking-lot';

/**
 * Where delivery ids are remembered. A delivery is claimed before its handlers run, committed when
 * they succeed and released when they fail, so that a retry runs them again.
 *
 * A store may answer synchronously or with a promise. Implementations must make `claim` atomic:
 * two concurrent claims of one id never both return `claimed`.
 */
export interface DeliveryStore {
  /**
   * Claims `id` for `leaseMs`. While the lease holds, other claims get `busy`; a claim that is
   * neither committed nor released in time lapses, so a crashed receiver does not lose the delivery.
   */
  claim(id: string, leaseMs: number): ClaimResult | Promise<ClaimResult>;
  /** The handlers succeeded: remember `id` as done for the retention window. */
  commit(id: string, token: string): void | Promise<void>;
  /** The handlers failed: forget the claim so that the sender's retry runs them again. */
  release(id: string, token: string): void | Promise<void>;
  /**
   * Renews a claim that `token` still holds for another `leaseMs`. Called while handlers run, so a
   * claim lapses only when its holder is gone (a crash), never under a slow handler. Optional: a
   * store without it keeps the first lease.
   */
  extend?(id: string, token: string, leaseMs: number): void | Promise<void>;
  /**
   * Runs `work` in a database transaction of the store and records `id` as done inside it, token
   * checked, before it commits: `ctx.transaction` in handlers. Optional: only a store whose records
   * live in the handler's database can offer it (the PostgreSQL store).
   */
  transaction?<T>(id: string, token: string, work: (client: SqlClient) => T | PromiseLike<T>): Promise<T>;
  /**
   * Where failures are noted and deliveries parked before svc drops them (`parkAfterMs`). Optional:
   * a store without it parks nothing, and a delivery that fails for a day is dropped by svc.
   */
  readonly parking?: ParkingLot;
  /** How long committed ids are kept, in ms; bot updates older than this are refused as replays. */
  readonly retentionMs?: number;
  /** Frees timers and connections the store owns. */
  close?(): void | Promise<void>;
}

/** What a claim found: the delivery is now ours (with the token to commit or release it), done already, or held by another attempt. */
export type ClaimResult = { readonly state: 'claimed'; readonly token: string } | { readonly state: 'done' } | { readonly state: 'busy' };

export { DAY_MS, DEFAULT_RETENTION_MS } from '../internal/delivery/svc-limits';
