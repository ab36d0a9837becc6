import type { Delivery } from '../internal/delivery';
import type { DeliveryScope, ScopeInit } from './delivery-scope';
import type { Awaitable } from './handler-types';

/** How one webhook routes a checked delivery: the handlers' context, and the handlers it runs. */
export interface DeliveryRoute<D extends Delivery> {
  /** The handlers' context: `init` plus what this webhook adds. */
  context(delivery: D, init: ScopeInit): DeliveryScope;
  /** The handler calls for this delivery, in registration order. */
  calls(delivery: D, ctx: DeliveryScope): HandlerCall[];
}

/** One handler called with its event and context: what the run waits for. */
export type HandlerCall = () => Awaitable<unknown>;
