import type { Queue } from 'bullmq';
import type { Cluster } from 'ioredis';
import { SvcWebhookError } from '../errors';
import type { Delivery } from '../internal/delivery/delivery';
import type { AcceptedDelivery, Handoff, JobSource } from './accepted-delivery';
import { jobIdOf, type InboxJob } from './inbox-job';
import type { InboxSettings } from './inbox-options';
import { inboxConnection, replicasHold, type InboxClient } from './redis-connection';

/** The BullMQ options every inbox job carries: retries in the window, dead letters kept until dropped. */
export function jobOptions(inbox: InboxSettings, deliveryId: string) {
  return {
    jobId: jobIdOf(deliveryId),
    attempts: inbox.attempts,
    backoff: { type: 'inbox' },
    // Kept so that a repeat enqueued after a receiver crash finds its job instead of making another.
    removeOnComplete: { age: Math.ceil(inbox.keepProcessedMs / 1000) },
    removeOnFail: false,
  };
}

/** The receiving side of the inbox: one BullMQ queue per webhook, opened on the first delivery. */
export class InboxProducer<D extends Delivery> {
  private queue: Queue<InboxJob> | undefined;
  private connection: InboxClient | undefined;

  constructor(
    private readonly inbox: InboxSettings,
    private readonly webhook: 'board' | 'bot',
    private readonly jobs: JobSource<D>,
  ) {}

  /** The receiver's seam: stores the delivery durably, or refuses it with 503 so that svc retries it. */
  readonly handoff: Handoff<D> = async (accepted: AcceptedDelivery<D>) => {
    const made = this.jobs.jobOf(accepted);
    const job = accepted.trace === undefined ? made : { ...made, trace: accepted.trace };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`redis did not take the delivery within ${this.inbox.enqueueTimeoutMs} ms`)), this.inbox.enqueueTimeoutMs);
    });
    try {
      await Promise.race([this.enqueue(job), timeout]);
    } catch (err) {
      throw new SvcWebhookError('inbox_unavailable', 'the inbox is unavailable; retry later', { cause: err, retryAfter: 5 });
    } finally {
      clearTimeout(timer);
    }
  };

  /**
   * Adds the job; on a cluster, resolves only once `waitForReplicas` replicas hold it too, so that
   * a 2xx never stands for a delivery that a master's crash right after could take along.
   */
  private async enqueue(job: InboxJob): Promise<void> {
    const started = performance.now();
    const queue = this.open();
    const client = this.connection!;
    await queue.add(job.kind, job, jobOptions(this.inbox, job.deliveryId));
    const { connection } = this.inbox;
    const replicas = typeof connection === 'string' ? 0 : connection.waitForReplicas;
    if (replicas === 0) return;
    const leftMs = this.inbox.enqueueTimeoutMs - (performance.now() - started);
    // A cluster's settings make a cluster's client (inboxConnection).
    await replicasHold(client as Cluster, queue.toKey('id'), replicas, leftMs);
  }

  async close(): Promise<void> {
    const { queue, connection } = this;
    this.queue = undefined;
    this.connection = undefined;
    await queue?.close().catch(() => undefined);
    await connection?.quit().catch(() => connection.disconnect());
  }

  private open(): Queue<InboxJob> {
    if (this.queue !== undefined) return this.queue;
    const { Queue: BullQueue } = require('bullmq') as typeof import('bullmq');
    const connection = inboxConnection(this.inbox.connection, 'producer');
    const queue = new BullQueue<InboxJob>(this.webhook, { connection, prefix: this.inbox.prefix });
    queue.on('error', () => undefined);
    // BullMQ prepares its connection once: it waits for Redis, then asks for its version. When that
    // fails (Redis dropped the connection just then), the queue refuses every add for ever; it is
    // let go, so that the next delivery opens a new one instead of being refused until a restart.
    queue.waitUntilReady().catch(() => {
      if (this.queue === queue) void this.close();
    });
    this.queue = queue;
    this.connection = connection;
    return queue;
  }
}
