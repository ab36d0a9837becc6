import { expressMiddleware, type Middleware } from '../adapters/node/express-middleware';
import { receiveRequest, type WebhookRequest } from '../adapters/plain/plain-request';
import type { JobSource } from '../inbox/accepted-delivery';
import type { Delivery } from '../internal/delivery/delivery';
import { DeliveryReport } from '../observe/delivery-report';
import { Receiver } from '../receive/receiver';
import type { Settings } from '../receive/settings';
import type { WebhookProtocol } from '../receive/webhook-protocol';
import { commonMethods, type Listeners } from './webhook-methods';
import { webhookInbox } from './webhook-inbox';
import { parkedDeliveries } from './parked-deliveries';

/** What both webhooks are assembled from. */
export interface WebhookAssembly<S, D extends Delivery, AnyHandler> {
  /** The middleware's name, as the factory's: `svcBoardWebhook`. */
  readonly name: string;
  readonly settings: Settings;
  readonly protocol: WebhookProtocol<S, D>;
  /** With the `inbox` option: what a job keeps of a delivery. */
  readonly jobs: JobSource<D> | undefined;
  readonly lists: Listeners<AnyHandler>;
}

/**
 * One webhook: its report, inbox, receiver and Express middleware, with the methods both webhooks
 * share (`onAny`, `onError`, `onDelivery`, `close`, `work`, `receive`, `path`, `forgetSecret`).
 */
export function assembleWebhook<S, D extends Delivery, AnyHandler>({ name, settings, protocol, jobs, lists }: WebhookAssembly<S, D, AnyHandler>) {
  const report = new DeliveryReport({
    webhook: protocol.webhook,
    logger: settings.logger,
    lineLogger: settings.lineLogger,
    listeners: lists.deliveryListeners,
    errorHandlers: lists.errorHandlers,
    now: settings.now,
  });
  const inbox = webhookInbox({ settings, protocol, jobs, report });
  const receiver = new Receiver({ protocol, settings, report, handoff: inbox.handoff });
  const middleware: Middleware = expressMiddleware(name, receiver);
  return Object.assign(middleware, commonMethods(middleware, { lists, inbox, closeReceiver: () => receiver.close(), flushLog: settings.flushLog }), {
    path: settings.path,
    parked: parkedDeliveries(settings.store.parking, receiver),
    receive: (request: Request | WebhookRequest) => receiveRequest(receiver, request),
    forgetSecret(id: string) {
      settings.secrets.lookup?.forget(id);
      return middleware;
    },
  });
}
