import type { Job, Worker } from 'bullmq';
import { BoardOrder } from '../inbox/board-order';
import type { InboxJob } from '../inbox/inbox-job';
import { retryDelay, type InboxSettings } from '../inbox/inbox-options';
import { inboxConnection } from '../inbox/redis-connection';
import { workSettings, type WorkOptions } from '../inbox/work-options';
import type { Delivery } from '../internal/delivery/delivery';
import { DEFAULT_RETENTION_MS } from '../internal/delivery/svc-limits';
import { safeError } from '../internal/logging/safe-error';
import type { DeliveryReport } from '../observe/delivery-report';
import { DeliveryTelemetry } from '../observe/telemetry';
import { DeliveryScope } from '../route/delivery-route';
import { inboxAttempt } from './inbox-attempt';
import { watchWorker } from './worker-watchdog';
import type { Settings } from './settings';
import type { WebhookProtocol } from './webhook-protocol';

export type { WorkOptions } from '../inbox/work-options';

/** A running inbox worker. */
export interface InboxWorker {
  /**
   * Stops taking deliveries and resolves once the running ones have settled (their handlers are
   * told through `ctx.signal`; a run that ends by failing is retried later like any failure), at
   * most `abandonAfterMs` after they started.
   */
  close(): Promise<void>;
}

/** What a worker is made of: the webhook's inbox, its kind (checks and routes), its settings and report. */
export interface WorkerParts<S, D extends Delivery> {
  readonly inbox: InboxSettings;
  readonly protocol: WebhookProtocol<S, D>;
  readonly settings: Pick<Settings, 'logger' | 'fixedSecrets' | 'abandonAfterMs' | 'secrets'>;
  readonly report: DeliveryReport;
}

// Ordered events waiting for their predecessor are promoted when it ends; this is only the safety net.
const RECHECK_MS = 30_000;

/** Runs the handlers of one webhook's inbox: `board.work()` / `bot.work()`. */
export function startWorker<S, D extends Delivery>(parts: WorkerParts<S, D>, options: WorkOptions = {}): InboxWorker {
  const { inbox, protocol, settings, report } = parts;
  const work = workSettings(options);
  const bull = require('bullmq') as typeof import('bullmq');
  const connection = inboxConnection(inbox.connection, 'worker');
  const queue = new bull.Queue<InboxJob>(protocol.webhook, { connection, prefix: inbox.prefix });
  queue.on('error', () => undefined);
  // A board's pending events and passed numbers are remembered as long as svc may still retry one
  // of its events (a day), and at least as long as an event of it may be retried here (its last
  // handed-over sequence, much longer: BOARD_PLACE_KEPT_MS).
  const boardTtlMs = Math.max(DEFAULT_RETENTION_MS, inbox.retryForMs + inbox.gapWaitMs);
  const order = new BoardOrder(connection, `${inbox.prefix}:${protocol.webhook}:`, inbox.gapWaitMs, boardTtlMs);
  const running = new Set<DeliveryScope>();
  // The failures this worker's handlers caused, already logged and reported by the attempt.
  const ownFailures = new WeakSet<Error>();

  const wake = async (jobId: string | null, self: string) => {
    if (jobId === null || jobId === self) return;
    const next = await queue.getJob(jobId);
    // Only a delayed job can be promoted; one already waiting or running needs no wake.
    await next?.promote().catch(() => undefined);
  };
  const waitForTurn = async (job: Job<InboxJob>, token: string | undefined, turn: { waitMs: number }): Promise<never> => {
    const data = job.data;
    await job.moveToDelayed(Date.now() + (turn.waitMs > 0 ? turn.waitMs : RECHECK_MS), token);
    // The predecessor may have ended between the check and the move: then nobody would promote us.
    const now = await order.probe(data.board!, job.id!, data.sequence!, Date.now());
    if (now.run) await job.promote().catch(() => undefined);
    throw new bull.DelayedError();
  };
  const telemetry = new DeliveryTelemetry(protocol.webhook, settings.fixedSecrets);
  const attempt = inboxAttempt({ inbox, protocol, settings, report, telemetry, order, running, wake, waitForTurn }, ownFailures);
  let lastTaken = Date.now();
  const processor = (job: Job<InboxJob>, token?: string) => {
    lastTaken = Date.now();
    return attempt(job, token);
  };

  const makeWorker = (): Worker<InboxJob> => {
    const made = new bull.Worker<InboxJob>(protocol.webhook, processor, {
      connection,
      prefix: inbox.prefix,
      concurrency: work.concurrency,
      lockDuration: work.lockDurationMs,
      stalledInterval: work.stalledIntervalMs,
      maxStalledCount: work.maxStalledCount,
      settings: { backoffStrategy: (attemptsMade: number) => retryDelay(attemptsMade, inbox.retryDelayMs, inbox.maxRetryDelayMs) },
    });
    made.on('error', (err) => settings.logger.error({ err: safeError(err) }, 'inbox worker: redis error; retrying'));
    made.on('stalled', (jobId: string) => settings.logger.warn({ jobId }, 'a delivery was taken back from a worker that stopped answering; it runs again'));
    made.on('failed', (job, err) => {
      if (job === undefined || ownFailures.has(err)) return;
      void foreignFailure(job, err).catch((e: unknown) =>
        settings.logger.error({ err: safeError(e), jobId: job.id }, 'inbox worker: could not record a dead letter'),
      );
    });
    return made;
  };
  let worker = makeWorker();
  const watchdog = watchWorker({
    everyMs: work.stalledIntervalMs,
    busy: () => running.size > 0,
    lastTaken: () => lastTaken,
    waiting: () => queue.getWaitingCount(),
    async restart() {
      const wedged = worker;
      worker = makeWorker();
      lastTaken = Date.now();
      // Its blocking connection may never answer: closing it is not waited for.
      void wedged.close(true).catch(() => undefined);
    },
    logger: settings.logger,
  });

  /**
   * A failure that did not come from the handlers: BullMQ failed the job itself, when its workers
   * kept disappearing mid-run more than `maxStalledCount` times. It is a dead letter like any other.
   */
  async function foreignFailure(job: Job<InboxJob>, err: Error): Promise<void> {
    const data = job.data;
    if (job.finishedOn === undefined) return; // retried: not a dead letter
    if (data.board !== undefined && data.sequence !== undefined && data.ordered === true)
      await wake(await order.finish(data.board, job.id!, data.sequence, false), job.id!);
    report.attempt({ delivery: data, attempt: job.attemptsMade, outcome: 'dead', code: 'handler_failed', error: err, durationMs: 0 });
  }

  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        watchdog.stop();
        for (const ctx of running) DeliveryScope.abort(ctx);
        await worker.close();
        await queue.close().catch(() => undefined);
        await connection.quit().catch(() => connection.disconnect());
      })();
      return closing;
    },
  };
}
