import type { Handoff, JobSource } from '../inbox/accepted-delivery';
import { InboxProducer } from '../inbox/inbox-producer';
import { requireQueuePackages } from '../inbox/redis-connection';
import type { Delivery } from '../internal/delivery/delivery';
import type { DeliveryReport } from '../observe/delivery-report';
import { startWorker, type InboxWorker, type WorkOptions } from '../receive/inbox-worker';
import type { Settings } from '../receive/settings';
import type { WebhookProtocol } from '../receive/webhook-protocol';

/** What a webhook middleware gets from its inbox: the receiver's hand-off, `work()`, and closing. */
export interface WebhookInbox<D extends Delivery> {
  /** Undefined without the `inbox` option: the handlers run in the request. */
  readonly handoff: Handoff<D> | undefined;
  work(options?: WorkOptions): InboxWorker;
  /** Closes the receiving side's queue connection (workers are closed by their own `close()`). */
  close(): Promise<void>;
}

/** What a webhook's inbox is made of. */
export interface InboxParts<S, D extends Delivery> {
  readonly settings: Settings;
  readonly protocol: WebhookProtocol<S, D>;
  /** With the `inbox` option: what a job keeps of a delivery of this kind. */
  readonly jobs: JobSource<D> | undefined;
  readonly report: DeliveryReport;
}

/** The inbox of one webhook, when it has the `inbox` option: the producer the receiver hands to, and its workers. */
export function webhookInbox<S, D extends Delivery>({ settings, protocol, jobs, report }: InboxParts<S, D>): WebhookInbox<D> {
  const inbox = settings.inbox;
  if (inbox !== undefined) requireQueuePackages();
  const producer = inbox === undefined || jobs === undefined ? undefined : new InboxProducer(inbox, protocol.webhook, jobs);
  return {
    handoff: producer?.handoff,
    work(options) {
      if (inbox === undefined || jobs === undefined)
        throw new TypeError('svc-webhooks: work() needs the `inbox` option: the handlers run in the request otherwise');
      return startWorker({ inbox, protocol, settings, report }, options);
    },
    close: () => producer?.close() ?? Promise.resolve(),
  };
}
