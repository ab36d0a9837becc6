import type { DeliveryListener, ErrorHandler } from '../route/handler-types';
import type { InboxWorker, WorkOptions } from '../receive/inbox-worker';
import type { WebhookInbox } from './webhook-inbox';
import type { Middleware } from '../adapters/node/express-middleware';
import type { WebhookRequest, WebhookResponse } from '../adapters/plain/plain-request';
import type { ParkedDeliveries } from './parked-deliveries';

/** What both webhook middlewares offer besides `on`. */
export interface WebhookMiddlewareBase<AnyHandler> extends Middleware {
  /** Runs `handler` for every delivery, including types and kinds this version does not know. */
  onAny(handler: AnyHandler): this;
  /** Is told of every delivery answered with an error (rejected, failed or timed out). */
  onError(handler: ErrorHandler): this;
  /** Is told of every answered request (outcome, status, duration, payload): for dashboards and metrics. */
  onDelivery(listener: DeliveryListener): this;
  /**
   * Stops taking deliveries (503) and resolves once running handlers have settled and committed (in
   * inbox mode: once the deliveries being enqueued are, and the queue connection is closed), and
   * every line logged until then is written.
   */
  close(): Promise<void>;
  /**
   * Inbox mode: starts a worker that runs this webhook's handlers for the deliveries in the inbox,
   * in this process. In another process, build the same webhook (options and handlers) and call
   * `work()` without mounting it. Throws without the `inbox` option.
   */
  work(options?: WorkOptions): InboxWorker;
  /**
   * Runs one request through the whole pipeline (verify, validate, de-dup, the handlers) and gives
   * the answer to send, with no framework: a Fetch `Request`, or the body, headers and path of a
   * request already read (a serverless event, a queue message). Never rejects: a failure of the
   * pipeline itself is a 500 answer. Every adapter is this, plus its framework's request and reply.
   */
  receive(request: Request | WebhookRequest): Promise<WebhookResponse>;
  /**
   * The deliveries parked in this webhook's store (`parkAfterMs`, `schemaPolicy: 'park'`): list,
   * show, replay (exactly once, through this webhook's handlers) and drop them.
   */
  readonly parked: ParkedDeliveries;
  /** The path this middleware answers when mounted with `app.use()`. */
  readonly path: string;
  /**
   * With a secret resolver: forgets what is cached for this board (bot) id, so the next delivery
   * asks the resolver again (after a rotation or a disconnect). Does nothing with a fixed secret.
   */
  forgetSecret(id: string): this;
}

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

/** What the shared methods act on. */
export interface MethodParts<AnyHandler> {
  readonly lists: Listeners<AnyHandler>;
  readonly inbox: Pick<WebhookInbox<never>, 'work' | 'close'>;
  /** Stops the receiver; resolves once running handlers have settled. */
  readonly closeReceiver: () => Promise<void>;
  /** Writes what the webhook's loggers hold. */
  readonly flushLog: () => Promise<void>;
}

/** The methods both webhooks share: onAny, onError, onDelivery, close and work. */
export function commonMethods<M, AnyHandler>(middleware: M, { lists, inbox, closeReceiver, flushLog }: MethodParts<AnyHandler>) {
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
    async close(): Promise<void> {
      await closeReceiver();
      await inbox.close();
      // The log is written in batches: what is logged before close() resolves is written by then.
      await flushLog();
    },
    work: (options?: WorkOptions) => inbox.work(options),
  };
}
