import type { DeliveryRecord } from '../../../src/route/handler-types';
import { memoryStore } from '../../../src/dedup/memory-store';
import type { BoardDelivery } from '../../../src/internal/delivery/delivery';
import type { Handoff } from '../../../src/inbox/accepted-delivery';
import { boardEvent } from '../../../src/testing/example-events';
import { codeOf, NOW, requestOf, settle, setup } from './receiver-harness';

/**
 * When the receiver reads the store's parking lot (the first failure of a delivery it runs in the
 * request) and when it does not, and what it refuses under `schemaPolicy: 'park'`.
 */

/** A memory store (its lot on the test's clock) whose lot lookups are counted. */
function lotStore() {
  const store = memoryStore({ now: () => NOW });
  const failure = jest.spyOn(store.parking, 'failure');
  return { store, failure };
}

const offSchema = () => boardEvent('task.created', { task: { title: 42 as unknown as string } });

describe('the receiver and the parking lot', () => {
  it('looks up when a delivery it runs in the request first failed', async () => {
    const { store, failure } = lotStore();
    const { send, on } = setup({ options: { store } });
    on('task.created', () => undefined);
    const event = boardEvent('task.created');
    expect((await send(requestOf(event))).status).toBe(200);
    expect(failure.mock.calls).toEqual([[event.id]]);
  });

  it('runs a delivery that never failed when the lot answers asynchronously, as a store over the network does', async () => {
    const { store, failure } = lotStore();
    failure.mockImplementation(async () => undefined);
    const { send, on } = setup({ options: { store } });
    const handler = jest.fn();
    on('task.created', handler);
    expect(await send(requestOf(boardEvent('task.created')))).toEqual({ status: 200, body: '{"ok":true}' });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('does not look anything up in inbox mode: the delivery is handed over, not run', async () => {
    const { store, failure } = lotStore();
    const handoff = jest.fn<Promise<void>, Parameters<Handoff<BoardDelivery>>>(async () => undefined);
    const { send } = setup({ handoff, options: { store } });
    expect((await send(requestOf(boardEvent('task.created')))).status).toBe(200);
    expect(handoff).toHaveBeenCalledTimes(1);
    expect(failure).not.toHaveBeenCalled();
  });

  it('does not look anything up for a schema violation it parks at once under schemaPolicy park', async () => {
    const { store, failure } = lotStore();
    const { send } = setup({ options: { store, schemaPolicy: 'park' } });
    const event = offSchema();
    expect(await send(requestOf(event))).toEqual({ status: 200, body: '{"ok":true,"parked":true}' });
    expect(await store.parking.get(event.id)).toMatchObject({ id: event.id, reason: 'schema' });
    expect(failure).not.toHaveBeenCalled();
  });

  it('under schemaPolicy park, refuses a payload off the schema that names no delivery 400, recorded with its schema problems', async () => {
    const listener = jest.fn();
    const { store } = lotStore();
    const { send } = setup({ options: { store, schemaPolicy: 'park' }, listeners: [listener] });
    const event = { ...boardEvent('task.created'), sequence: -1 };
    const answer = await send(requestOf(event));
    await settle();
    expect([answer.status, codeOf(answer)]).toEqual([400, 'schema_violation']);
    const record = listener.mock.calls[0][0] as DeliveryRecord;
    expect(record).toMatchObject({ outcome: 'rejected', code: 'schema_violation', deliveryId: undefined });
    expect(record.problems).toContainEqual({ path: '/sequence', message: expect.any(String) });
    expect(await store.parking.list()).toEqual([]);
  });
});
