import type { Delivery } from '../internal/delivery/delivery';
import { isThenable } from '../internal/checks/value-checks';
import { DeliveryScope, type DeliveryClaim, type DeliveryRoute, type HandlerCall, type ScopeInit } from './delivery-route';

export type { HandlerCall } from './delivery-route';

/**
 * The handlers' run, in the receiver (direct mode) and in an inbox worker alike: the context, the
 * calls of every matching handler, their deadline, and how they ended.
 */

/** One delivery to run the handlers of, in the receiver (direct mode) or in an inbox worker. */
export interface Dispatch<D extends Delivery> {
  readonly delivery: D;
  readonly route: DeliveryRoute<D>;
  /** The context's parts besides the delivery's id and kind. */
  readonly scope: Omit<ScopeInit, 'deliveryId' | 'kind'>;
  /** The verifying board's (bot's) secrets, with a resolver: dropped from `ctx.log`. */
  readonly secrets: readonly string[];
  /** How long the handlers may run, in ms; past it `ctx.signal` aborts and the run is `timed_out`. */
  readonly deadlineMs: number;
  /** Direct mode: the claim the handlers run under, which `ctx.transaction` records the delivery with. */
  readonly claim?: Omit<DeliveryClaim, 'handlers'>;
  /** Wraps the handler calls (each in its OpenTelemetry span, when traced). */
  readonly wrap?: (calls: HandlerCall[]) => HandlerCall[];
}

/** A dispatched delivery: its context (for the log and the abort), and how its handlers ran. */
export interface Dispatched {
  readonly ctx: DeliveryScope;
  readonly run: RunResult | Promise<RunResult>;
}

/**
 * Builds the delivery's context and runs its handlers with a deadline: the one way the receiver and
 * the inbox worker run handlers. Synchronous when every handler is.
 */
export function dispatch<D extends Delivery>(d: Dispatch<D>): Dispatched {
  const { delivery } = d;
  const ctx = d.route.context(delivery, { ...d.scope, deliveryId: delivery.id, kind: delivery.kind });
  DeliveryScope.dropFromLog(ctx, d.secrets);
  const own = d.route.calls(delivery, ctx);
  if (d.claim !== undefined) DeliveryScope.bindClaim(ctx, { ...d.claim, handlers: own.length });
  const calls = d.wrap === undefined ? own : d.wrap(own);
  return { ctx, run: runHandlers(calls, d.deadlineMs, () => DeliveryScope.abort(ctx)) };
}

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
