import type { RequestListener } from 'node:http';
import { trivialHandler } from './handler';
import { postgresListener } from './svc-postgres';

/**
 * svc-webhooks with the PostgreSQL store and a transactional handler: each delivery's effect is one
 * row inserted in ctx.transaction, committed with the done mark (claim, BEGIN, INSERT, mark, COMMIT:
 * five round trips; the receiver's own commit then costs none).
 */
export function createListener(): RequestListener {
  return postgresListener((_event, ctx) =>
    ctx.transaction(async (tx) => {
      await tx.query('INSERT INTO bench_effects (delivery_id) VALUES ($1)', [ctx.deliveryId]);
      trivialHandler();
    }),
  );
}
