import { inboxConnection, requireQueuePackages } from '../../../src/inbox/redis-connection';
import { Redis, resetIoredis } from '../../support/fake-ioredis';

/**
 * The inbox's ioredis clients against a scripted ioredis: the options each role gets (a producer
 * fails fast, a worker retries for ever), the reconnect delays, and the swallowed error events.
 */
jest.mock('ioredis', () => jest.requireActual('../../support/fake-ioredis'));

const clients = Redis.made;

beforeEach(() => resetIoredis());

describe('the inbox\'s Redis connection', () => {
  it('for a producer, fails a command at once while Redis is unreachable: no offline queue, no retried request, a 2 s connect timeout', () => {
    const client = inboxConnection('redis://inbox:6379/1', 'producer');
    expect(client).toBe(clients[0]);
    expect(clients).toHaveLength(1);
    const { retryStrategy, ...options } = clients[0]!.options;
    expect(clients[0]!.url).toBe('redis://inbox:6379/1');
    expect(options).toStrictEqual({ enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000 });
    expect(typeof retryStrategy).toBe('function');
  });

  it('for a worker, retries its blocking commands for ever (maxRetriesPerRequest null, as BullMQ requires)', () => {
    inboxConnection('rediss://inbox:6380', 'worker');
    const { retryStrategy, ...options } = clients[0]!.options;
    expect(clients[0]!.url).toBe('rediss://inbox:6380');
    expect(options).toStrictEqual({ maxRetriesPerRequest: null });
    expect(typeof retryStrategy).toBe('function');
  });

  it.each(['producer', 'worker'] as const)('for a %s, reconnects after 100 ms more per attempt, at most 2 s apart', (role) => {
    inboxConnection('redis://h', role);
    const { retryStrategy } = clients[0]!.options;
    expect([1, 2, 5, 19, 20, 21, 100].map(retryStrategy)).toEqual([100, 200, 500, 1900, 2000, 2000, 2000]);
  });

  it.each(['producer', 'worker'] as const)('for a %s, listens to its error events and ignores them (failures surface per command)', (role) => {
    inboxConnection('redis://h', role);
    const { on } = clients[0]!;
    expect(on).toHaveBeenCalledTimes(1);
    const [event, listener] = on.mock.calls[0]! as [string, (err: Error) => unknown];
    expect(event).toBe('error');
    expect(listener(new Error('ECONNREFUSED'))).toBeUndefined();
  });
});

describe('the inbox\'s packages at setup', () => {
  it('are found where installed', () => {
    expect(() => requireQueuePackages()).not.toThrow();
  });

  it('are bullmq and ioredis, each looked up once', () => {
    const resolve = jest.fn((name: string) => `/node_modules/${name}/index.js`);
    requireQueuePackages(resolve);
    expect(resolve.mock.calls).toEqual([['bullmq'], ['ioredis']]);
  });

  it.each(['bullmq', 'ioredis'])('refuse the setup with a TypeError when %s is missing', (missing) => {
    const resolve = (name: string) => {
      if (name === missing) throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
      return `/node_modules/${name}/index.js`;
    };
    expect(() => requireQueuePackages(resolve)).toThrow(TypeError);
  });
});
