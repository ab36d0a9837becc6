import pino from 'pino';
import { memoryStore } from '../../../src/dedup/memory-store';
import { deliveryDoneSql } from '../../../src/webhooks/delivery-done-sql';
import { postgresStore } from '../../../src/dedup/postgres-store';
import type { DeliveryStore } from '../../../src/dedup/delivery-store';
import { DeliveryScope } from '../../../src/route/delivery-route';
import { fakePool } from '../../support/fake-pg';

/** `deliveryDoneSql(ctx)`: the done mark for a handler's own transaction. */
function contextOf(store: DeliveryStore, deliveryId = 'd1') {
  const scope = new DeliveryScope({ deliveryId, kind: 'task.created', receivedAt: 0, logger: pino({ level: 'silent' }) });
  DeliveryScope.bindClaim(scope, { store, token: 'tok', handlers: 1 });
  return scope;
}

describe('deliveryDoneSql', () => {
  it("is the PostgreSQL store's done mark for the delivery and its claim's token, sending nothing itself", async () => {
    const { pool, sent } = fakePool();
    const store = postgresStore({ pool, retentionMs: 90_000 });
    try {
      expect(deliveryDoneSql(contextOf(store, 'delivery-7'))).toEqual(store.doneMark('delivery-7', 'tok'));
      expect(deliveryDoneSql(contextOf(store)).values).toEqual(['d1', 'tok', 90_000]);
      expect(sent).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('is refused (TypeError) for a store that is not the PostgreSQL store', () => {
    const store = memoryStore();
    try {
      expect(() => deliveryDoneSql(contextOf(store))).toThrow(TypeError);
    } finally {
      store.close();
    }
  });

  it('is refused for a look-alike store, even one with a doneMark of its own', () => {
    const store = memoryStore();
    const doneMark = jest.fn(() => ({ text: 'SELECT 1', values: [] }));
    try {
      expect(() => deliveryDoneSql(contextOf(Object.assign(store, { doneMark })))).toThrow(TypeError);
      expect(doneMark).not.toHaveBeenCalled();
    } finally {
      store.close();
    }
  });

  it("is refused once the delivery's one transaction was taken", async () => {
    const { pool } = fakePool();
    const store = postgresStore({ pool });
    try {
      const ctx = contextOf(store);
      deliveryDoneSql(ctx);
      expect(() => deliveryDoneSql(ctx)).toThrow(TypeError);
    } finally {
      await store.close();
    }
  });
});
