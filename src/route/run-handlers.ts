import type { Awaitable } from './handler-types';

export type HandlerCall = () => Awaitable<unknown>;

export type RunResult =
  | { readonly state: 'succeeded' }
  | { readonly state: 'failed'; readonly error: unknown }
  /** The deadline passed; `settled` tells, later, how the handlers ended. */
  | { readonly state: 'timed_out'; readonly settled: Promise<SettledResult> };

export type SettledResult = { readonly state: 'succeeded' } | { readonly state: 'failed'; readonly error: unknown };

const SUCCEEDED = Object.freeze({ state: 'succeeded' as const });

/**
 * Runs every matching handler of one delivery concurrently and waits for all of them, with a
 * deadline. A delivery succeeds only when every handler does: the sender's retry runs them all again.
 */
export function runHandlers(calls: readonly HandlerCall[], timeoutMs: number, controller: AbortController): Promise<RunResult> {
  if (calls.length === 0) return Promise.resolve(SUCCEEDED);
  const settled = settleAll(calls);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<RunResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error('handler deadline passed'));
      resolve({ state: 'timed_out', settled });
    }, timeoutMs);
  });
  return Promise.race([settled, deadline]).finally(() => clearTimeout(timer));
}

async function settleAll(calls: readonly HandlerCall[]): Promise<SettledResult> {
  const results = await Promise.allSettled(calls.map(invoke));
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (errors.length === 0) return SUCCEEDED;
  return { state: 'failed', error: errors.length === 1 ? errors[0] : new AggregateError(errors, `${errors.length} handlers failed`) };
}

// A handler that throws synchronously fails like one that rejects.
async function invoke(call: HandlerCall): Promise<unknown> {
  return call();
}
