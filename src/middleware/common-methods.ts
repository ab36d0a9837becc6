import type { DeliveryListener, ErrorHandler } from '../route/handler-types';

/** The lists a webhook's Receiver reads; the public methods below fill them. */
export interface Listeners<AnyHandler> {
  readonly any: AnyHandler[];
  readonly errorHandlers: ErrorHandler[];
  readonly deliveryListeners: DeliveryListener[];
}

export function listeners<AnyHandler>(): Listeners<AnyHandler> {
  return { any: [], errorHandlers: [], deliveryListeners: [] };
}

function mustBeFunction(value: unknown, what: string): void {
  if (typeof value !== 'function') throw new TypeError(`svc-webhooks: ${what} must be a function`);
}

/** The methods both webhooks share: onAny, onError, onDelivery and close. */
export function commonMethods<M, AnyHandler>(middleware: M, lists: Listeners<AnyHandler>, close: () => Promise<void>) {
  return {
    onAny(handler: AnyHandler): M {
      mustBeFunction(handler, 'a handler');
      lists.any.push(handler);
      return middleware;
    },
    onError(handler: ErrorHandler): M {
      mustBeFunction(handler, 'an error handler');
      lists.errorHandlers.push(handler);
      return middleware;
    },
    onDelivery(listener: DeliveryListener): M {
      mustBeFunction(listener, 'a delivery listener');
      lists.deliveryListeners.push(listener);
      return middleware;
    },
    close,
  };
}
