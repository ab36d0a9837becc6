import type { DeliveryContext } from '../route/handler-types';
import { DeliveryScope } from '../route/delivery-route';
import { PostgresStore, type DoneMarkStatement } from '../dedup/postgres-store';

/**
 * For handlers that keep their own transaction (Prisma, Drizzle, Kysely, a pg client): the
 * statement that records this delivery as done. Run it inside that transaction, last, before it
 * commits; it fails, and so rolls the transaction back, when this attempt no longer holds the
 * delivery. The same rules as `ctx.transaction` apply: once per delivery, one handler.
 */
export function deliveryDoneSql(ctx: DeliveryContext): DoneMarkStatement {
  const { store, token } = DeliveryScope.takeTransaction(ctx);
  if (!(store instanceof PostgresStore)) throw new TypeError("svc-webhooks: deliveryDoneSql needs the webhook's store to be a postgresStore");
  return store.doneMark(ctx.deliveryId, token);
}
