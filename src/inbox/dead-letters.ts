import type { Job, Queue } from 'bullmq';
import type { InboxClient } from './redis-connection';
import { deliveryIdOf, jobIdOf, type InboxJob } from './inbox-job';

export const INBOX_QUEUES = ['board', 'bot'] as const;

/** A delivery whose handlers failed for the last time (or whose worker kept disappearing), kept until retried or dropped. */
export interface DeadLetter {
  readonly webhook: 'board' | 'bot';
  readonly deliveryId: string;
  readonly kind: string;
  readonly receivedAt: number;
  /** When it failed for the last time, in ms since the epoch. */
  readonly failedAt: number | undefined;
  /** How many times its handlers ran. */
  readonly attempts: number;
  /** The last error's message, as the worker recorded it. */
  readonly lastError: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The raw body, as received. */
  readonly body: string;
}

/** The dead-letter set of the inbox (BullMQ's failed jobs), for `svc-webhooks inbox`. */
export class DeadLetters {
  private readonly queues: ReadonlyMap<'board' | 'bot', Queue<InboxJob>>;

  /** `connection`: a connected ioredis client (a `Redis` or a `Cluster`), closed by its owner. */
  constructor(
    private readonly connection: InboxClient,
    prefix: string,
  ) {
    const { Queue: BullQueue } = require('bullmq') as typeof import('bullmq');
    this.queues = new Map(INBOX_QUEUES.map((name) => [name, new BullQueue<InboxJob>(name, { connection, prefix, skipMetasUpdate: true })]));
  }

  /** Every dead letter, oldest failure first. */
  async list(): Promise<DeadLetter[]> {
    const letters: DeadLetter[] = [];
    for (const queue of this.queues.values()) for (const job of await queue.getFailed(0, -1)) letters.push(letterOf(job));
    return letters.sort((a, b) => (a.failedAt ?? 0) - (b.failedAt ?? 0));
  }

  async show(deliveryId: string): Promise<DeadLetter | undefined> {
    const job = await this.find(deliveryId);
    return job && letterOf(job);
  }

  /** Puts a dead letter back in its queue with a fresh retry window. False when there is no such dead letter. */
  async retry(deliveryId: string): Promise<boolean> {
    const job = await this.find(deliveryId);
    if (job === undefined) return false;
    // BullMQ keeps counting a job's stalls across a retry: a dead letter whose workers kept
    // disappearing would fail again at its first stall. Its job hash is ours while it is failed.
    await this.connection.hdel(this.queues.get(job.data.webhook)!.toKey(job.id!), 'stc');
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    return true;
  }

  /** Retries every dead letter; answers how many. */
  async retryAll(): Promise<number> {
    let count = 0;
    for (const letter of await this.list()) if (await this.retry(letter.deliveryId)) count++;
    return count;
  }

  /** Deletes a dead letter for good. False when there is no such dead letter. */
  async drop(deliveryId: string): Promise<boolean> {
    const job = await this.find(deliveryId);
    if (job === undefined) return false;
    await job.remove();
    return true;
  }

  async close(): Promise<void> {
    for (const queue of this.queues.values()) await queue.close();
  }

  private async find(deliveryId: string): Promise<Job<InboxJob> | undefined> {
    for (const queue of this.queues.values()) {
      const job = await queue.getJob(jobIdOf(deliveryId));
      if (job !== undefined && (await job.isFailed())) return job;
    }
    return undefined;
  }
}

function letterOf(job: Job<InboxJob>): DeadLetter {
  const data = job.data;
  return {
    webhook: data.webhook,
    deliveryId: data.deliveryId ?? deliveryIdOf(job.id ?? ''),
    kind: data.kind,
    receivedAt: data.receivedAt,
    failedAt: job.finishedOn,
    attempts: job.attemptsMade,
    lastError: job.failedReason ?? '',
    headers: data.headers,
    body: data.body,
  };
}
