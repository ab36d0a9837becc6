import type { Delivery } from '../internal/delivery';
import { DeliveryScope, type DeliveryClaim, type ScopeInit } from './delivery-scope';
import type { DeliveryRoute } from './delivery-route';
import { runHandlers, type HandlerCall, type RunResult } from './run-handlers';

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
