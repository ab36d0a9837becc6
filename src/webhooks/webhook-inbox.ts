import type { Settings } from './options';
import type { Delivery, Protocol } from '../receive/protocol';
import type { Handoff } from '../inbox/accepted-delivery';
import type { DeliveryListener } from '../route/handler-types';
import { InboxProducer } from '../inbox/inbox-producer';
import { requireQueuePackages } from '../inbox/redis-connection';
import { startWorker, type InboxWorker, type WorkOptions } from '../receive/inbox-worker';
import type { WebhookJobs } from '../receive/webhook-jobs';

/** What a webhook middleware gets from its inbox: the receiver's hand-off, `work()`, and closing. */
export interface WebhookInbox<D extends Delivery> {
  /** Undefined without the `inbox` option: the handlers run in the request. */
  readonly handoff: Handoff<D> | undefined;
  work(options?: WorkOptions): InboxWorker;
  /** Closes the receiving side's queue connection (workers are closed by their own `close()`). */
  close(): Promise<void>;
}

export function webhookInbox<S, D extends Delivery>(config: Settings, protocol: Protocol<S, D>, jobs: WebhookJobs<S, D> | undefined, listeners: readonly DeliveryListener[]): WebhookInbox<D> {
  const inbox = config.inbox;
  if (inbox !== undefined) requireQueuePackages();
  const producer = inbox === undefined || jobs === undefined ? undefined : new InboxProducer(inbox, protocol.webhook, jobs);
  return {
    handoff: producer?.handoff,
    work(options) {
      if (inbox === undefined || jobs === undefined) throw new TypeError('svc-webhooks: work() needs the `inbox` option: the handlers run in the request otherwise');
      return startWorker({ inbox, protocol, jobs, logger: config.logger, fixedSecrets: config.fixedSecrets, listeners, abandonAfterMs: config.abandonAfterMs, lookup: config.secrets.lookup }, options);
    },
    close: () => producer?.close() ?? Promise.resolve(),
  };
}
