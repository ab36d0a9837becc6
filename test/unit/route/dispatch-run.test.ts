import { runHandlers, type HandlerCall, type RunResult, type SettledResult } from '../../../src/route/dispatch';

const fake = () => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
afterEach(() => jest.useRealTimers());

/** A rejected promise already marked as handled: a run that drops it must fail its test, not the process. */
function rejected(error: unknown): Promise<never> {
  const promise = Promise.reject(error);
  promise.catch(() => undefined);
  return promise;
}

function fail(error: unknown): HandlerCall {
  return () => {
    throw error;
  };
}

describe('running the handlers of a delivery', () => {
  it('with none, succeeds at once', () => {
    expect(runHandlers([], 1000, jest.fn())).toEqual({ state: 'succeeded' });
  });

  it('that all return without a promise: settles at once, with no timer', () => {
    fake();
    const calls = [jest.fn(), jest.fn(() => 42)];
    expect(runHandlers(calls, 1000, jest.fn())).toEqual({ state: 'succeeded' });
    expect(calls.map((c) => c.mock.calls.length)).toEqual([1, 1]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('one of which throws: fails with what it threw, at once, after calling every handler', () => {
    const boom = new Error('boom');
    const after = jest.fn();
    expect(runHandlers([fail(boom), after], 1000, jest.fn())).toEqual({ state: 'failed', error: boom });
    expect(after).toHaveBeenCalledTimes(1);
  });

  it('that throw undefined: still a failure', () => {
    expect(runHandlers([fail(undefined)], 1000, jest.fn())).toEqual({ state: 'failed', error: undefined });
  });

  it('several of which fail: fails with an AggregateError of every failure, the synchronous ones first', async () => {
    const a = new Error('a');
    const b = new Error('b');
    const c = new Error('c');
    const result = (await runHandlers([() => rejected(b), fail(a), () => Promise.resolve(), () => rejected(c)], 1000, jest.fn())) as Extract<
      RunResult,
      { state: 'failed' }
    >;
    expect(result.state).toBe('failed');
    expect(result.error).toBeInstanceOf(AggregateError);
    expect((result.error as AggregateError).errors).toEqual([a, b, c]);
  });

  it('that return promises: waits for all of them, and clears its timer', async () => {
    fake();
    const onDeadline = jest.fn();
    let settled: RunResult | undefined;
    void Promise.resolve(runHandlers([() => new Promise((r) => setTimeout(r, 10)), () => new Promise((r) => setTimeout(r, 20))], 1000, onDeadline)).then(
      (r) => (settled = r),
    );
    await jest.advanceTimersByTimeAsync(19);
    expect(settled).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(settled).toEqual({ state: 'succeeded' });
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(2000);
    expect(onDeadline).not.toHaveBeenCalled();
  });

  it('that return any thenable: waits for it', async () => {
    const thenable = {
      // oxlint-disable-next-line unicorn/no-thenable -- a handler may return any thenable, not only a Promise
      then: (resolve: (v: unknown) => void, reject: (e: unknown) => void) => void rejected(new Error('late')).then(resolve, reject),
    };
    expect(await runHandlers([() => thenable], 1000, jest.fn())).toEqual({ state: 'failed', error: new Error('late') });
  });

  it('past the deadline: tells onDeadline once and answers timed_out; `settled` tells later how they ended', async () => {
    fake();
    const onDeadline = jest.fn();
    let release!: () => void;
    const running = runHandlers([() => new Promise<void>((r) => (release = r)), fail(new Error('sync'))], 500, onDeadline);
    let result: RunResult | undefined;
    void Promise.resolve(running).then((r) => (result = r));
    await jest.advanceTimersByTimeAsync(499);
    expect([result, onDeadline.mock.calls.length]).toEqual([undefined, 0]);
    await jest.advanceTimersByTimeAsync(1);
    expect(onDeadline).toHaveBeenCalledTimes(1);
    expect(result?.state).toBe('timed_out');
    release();
    const end: SettledResult = await (result as Extract<RunResult, { state: 'timed_out' }>).settled;
    expect(end).toEqual({ state: 'failed', error: new Error('sync') });
  });
});
