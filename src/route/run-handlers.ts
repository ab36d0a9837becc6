import { isThenable } from '../internal/thenable';
import type { Awaitable } from './handler-types';

export type HandlerCall = () => Awaitable<unknown>;

export type SettledResult = { readonly state: 'succeeded' } | { readonly state: 'failed'; readonly error: unknown };

export type RunResult =
  | SettledResult
  /** The deadline passed; `settled` tells, later, how the handlers ended. */
  | { readonly state: 'timed_out'; readonly settled: Promise<SettledResult> };

const SUCCEEDED: SettledResult = Object.freeze({ state: 'succeeded' as const });

/**
 * Runs every matching handler of one delivery concurrently and waits for all of them, with a
 * deadline. A delivery succeeds only when every handler does: the sender's retry runs them all
 * again. Handlers that return without a promise settle at once, with no timer and no promise.
 */
export function runHandlers(calls: readonly HandlerCall[], timeoutMs: number, onDeadline: () => void): RunResult | Promise<RunResult> {
  const errors: unknown[] = [];
  let pending: Array<PromiseLike<unknown>> | undefined;
  for (const call of calls) {
    try {
      const result = call();
      if (isThenable(result)) (pending ??= []).push(result);
    } catch (err) {
      // A handler that throws synchronously fails like one that rejects.
      errors.push(err);
    }
  }
  if (pending === undefined) return outcome(errors);
  const settled = Promise.allSettled(pending).then((results) => {
    for (const r of results) if (r.status === 'rejected') errors.push(r.reason);
    return outcome(errors);
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<RunResult>((resolve) => {
    timer = setTimeout(() => {
      onDeadline();
      resolve({ state: 'timed_out', settled });
    }, timeoutMs);
  });
  return Promise.race([settled, deadline]).finally(() => clearTimeout(timer));
}

function outcome(errors: unknown[]): SettledResult {
  if (errors.length === 0) return SUCCEEDED;
  return { state: 'failed', error: errors.length === 1 ? errors[0] : new AggregateError(errors, `${errors.length} handlers failed`) };
}
