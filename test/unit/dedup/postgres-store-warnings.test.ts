import { storeOpener } from '../../support/fake-pg';

/**
 * What the PostgreSQL store tells its `logger` about its own setup: parking tables that an older
 * migration did not make. (A failed prune: postgres-store.test.ts.)
 */
const open = storeOpener();

const undefinedTable = () => Promise.reject(Object.assign(new Error('relation does not exist'), { code: '42P01' }));

describe('a postgres store whose database has no parking tables', () => {
  it('warns its logger once, naming the table given', async () => {
    const warn = jest.fn();
    const { store } = open({ answer: undefinedTable }, { table: 'hooks.deliveries', logger: { warn } });
    await expect(store.parking.failure('a')).resolves.toBeUndefined();
    await expect(store.parking.failure('b')).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toEqual({ table: 'hooks.deliveries' });
  });

  it('names the default table when none was given', async () => {
    const warn = jest.fn();
    const { store } = open({ answer: undefinedTable }, { logger: { warn } });
    await store.parking.failure('a');
    expect(warn.mock.calls[0]![0]).toEqual({ table: 'svc_webhook_deliveries' });
  });

  it('finds no failure without a logger as well', async () => {
    const { store } = open({ answer: undefinedTable });
    await expect(store.parking.failure('a')).resolves.toBeUndefined();
  });
});
