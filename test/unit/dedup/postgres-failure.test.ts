import { isConnectionFailure, StoreTimeoutError, withTimeout } from '../../../src/dedup/postgres-failure';

describe('which PostgreSQL errors mean the database could not be reached in time', () => {
  it.each(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])('a socket error %s', (code) => {
    expect(isConnectionFailure(Object.assign(new Error('socket'), { code }))).toBe(true);
  });

  it.each(['57P01', '57P02', '57P03', '53300', '53000', '08000', '08006', '08P01'])(
    'a server going away or full, or a connection exception: SQLSTATE %s',
    (code) => {
      expect(isConnectionFailure({ code, message: 'from the server' })).toBe(true);
    },
  );

  it.each([
    'Connection terminated unexpectedly',
    'Client has encountered a connection error and is not queryable',
    'timeout exceeded when trying to connect',
    'Client was closed and is not queryable',
  ])("pg's own message without a code: %s", (message) => {
    expect(isConnectionFailure(new Error(message))).toBe(true);
  });

  it('a statement that took longer than the command timeout', () => {
    expect(isConnectionFailure(new StoreTimeoutError('slow'))).toBe(true);
    expect(new StoreTimeoutError('slow').name).toBe('StoreTimeoutError');
  });

  it.each([
    ['a unique violation', { code: '23505', message: 'duplicate key value' }],
    ['a syntax error', { code: '42601', message: 'syntax error' }],
    ['a code that only contains a socket code', { code: 'XECONNREFUSED', message: 'x' }],
    ['a code with 08 later in it', { code: '42P08', message: 'x' }],
    ["pg's message in the middle of another", { message: 'the Connection terminated unexpectedly, said the handler' }],
    ["pg's connect timeout in the middle of another", { message: 'a timeout exceeded when trying to connect, said the handler' }],
    ["pg's closed client in the middle of another", { message: 'the Client was closed and is not queryable, said the handler' }],
    ['a numeric code', { code: 8, message: 'x' }],
    ['a message that is not text', { message: 7 }],
    ["a message that is not text but reads as pg's when converted", { message: ['Connection terminated unexpectedly'] }],
    ["a message object that prints as pg's", { message: { toString: () => 'Connection terminated' } }],
    ['a thrown string', 'Connection terminated'],
    ['null', null],
    ['undefined', undefined],
  ])('not %s', (_what, err) => {
    expect(isConnectionFailure(err)).toBe(false);
  });
});

describe('a store call with a time limit', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('settles as the work does within the limit, leaving no timer', async () => {
    await expect(withTimeout(Promise.resolve(1), 100, 'claim')).resolves.toBe(1);
    const failure = new Error('refused');
    await expect(withTimeout(Promise.reject(failure), 100, 'claim')).rejects.toBe(failure);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects with a StoreTimeoutError once the limit passes, and hands a late result to `late`', async () => {
    let finish: (value: string) => void = () => undefined;
    const late: string[] = [];
    const call = withTimeout(new Promise<string>((resolve) => (finish = resolve)), 100, 'claim', (value) => late.push(value));
    const outcome = call.then(
      () => 'resolved',
      (err: unknown) => err,
    );
    await jest.advanceTimersByTimeAsync(99);
    expect(late).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(await outcome).toBeInstanceOf(StoreTimeoutError);
    finish('connection');
    await Promise.resolve();
    expect(late).toEqual(['connection']);
  });

  it('ignores a late failure', async () => {
    let fail: (err: Error) => void = () => undefined;
    const call = withTimeout(new Promise<string>((_resolve, reject) => (fail = reject)), 100, 'claim', () => {
      throw new Error('late must not see a failure');
    });
    const outcome = call.catch((err: unknown) => err);
    await jest.advanceTimersByTimeAsync(100);
    fail(new Error('too late'));
    await Promise.resolve();
    expect(await outcome).toBeInstanceOf(StoreTimeoutError);
  });

  describe('with real timers', () => {
    beforeEach(() => jest.useRealTimers());

    it('drops a late result when nobody asked for it', async () => {
      let finish: (value: string) => void = () => undefined;
      const unhandled = jest.fn();
      process.on('unhandledRejection', unhandled);
      try {
        const call = withTimeout(new Promise<string>((resolve) => (finish = resolve)), 1, 'claim');
        await expect(call).rejects.toBeInstanceOf(StoreTimeoutError);
        finish('connection');
        await new Promise((r) => setTimeout(r, 5));
        expect(unhandled).not.toHaveBeenCalled();
      } finally {
        process.off('unhandledRejection', unhandled);
      }
    });
  });
});
