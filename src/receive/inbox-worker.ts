import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { WebhookLogger } from '../internal/logger';
import { DEFAULT_RETENTION_MS } from '../dedup/delivery-store';
import { SvcWebhookError, isSvcWebhookError } from '../errors';
import { safeError } from '../internal/safe-error';
import { childDropping, NO_SECRETS } from '../internal/log-redaction';
import type { SequenceGap } from '../ordering/board-sequence-tracker';
import { isThenable } from '../internal/thenable';
import { parseJson } from '../parse/parse-json';
import { DeliveryTelemetry, type ProcessTrace } from '../observe/telemetry';
import type { SecretLookup } from '../verify/secret-resolver';
import type { Delivery, Protocol } from './protocol';
import { DeliveryScope } from '../route/delivery-scope';
import type { DeliveryListener, DeliveryRecord, QueueOutcome } from '../route/handler-types';
import { runHandlers, type RunResult, type SettledResult } from '../route/run-handlers';
import { BoardOrder, type Turn } from '../inbox/board-order';
import type { InboxJob } from '../inbox/inbox-job';
import { retryDelay, type InboxSettings } from '../inbox/inbox-options';
import { inboxConnection } from '../inbox/redis-connection';
import { headersOnly, type WebhookJobs } from './webhook-jobs';
import { workSettings, type WorkOptions } from '../inbox/work-options';

export type { WorkOptions } from '../inbox/work-options';

/** A running inbox worker. */
export interface InboxWorker {
  /**
   * Stops taking deliveries and resolves once the running ones have settled (their handlers are
   * told through `ctx.signal`; a run that ends by failing is retried later like any failure), at
   * most `abandonAfter` after they started.
   */
  close(): Promise<void>;
}

// Ordered events waiting for their predecessor are promoted when it ends; this is only the safety net.
const RECHECK_MS = 30_000;

interface WorkerParts<S, D extends Delivery> {
  readonly inbox: InboxSettings;
  readonly protocol: Protocol<S, D>;
  readonly jobs: WebhookJobs<S, D>;
  readonly logger: WebhookLogger;
  /** The webhook's configured secrets: a handler's error recorded on a span is scrubbed of them. */
  readonly fixedSecrets: readonly string[];
  readonly listeners: readonly DeliveryListener[];
  /**
   * The webhook's `abandonAfter`: no sender waits on a worker, but a run that never settles would
   * hold its job (and, in board order, its board) for ever. Past it the attempt counts as failed.
   */
  readonly abandonAfterMs: number;
  /** The webhook's secret resolver, if it has one: the handlers' logger drops the verifying board's (bot's) secrets. */
  readonly lookup?: SecretLookup;
}

/** Runs the handlers of one webhook's inbox: `board.work()` / `bot.work()`. */
export function startWorker<S, D extends Delivery>(parts: WorkerParts<S, D>, options: WorkOptions = {}): InboxWorker {
  const { inbox, protocol, jobs, logger, fixedSecrets, listeners, abandonAfterMs, lookup } = parts;
  const settings = workSettings(options);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bull = require('bullmq') as typeof import('bullmq');
  const connection: Redis = inboxConnection(inbox.connection, 'worker');
  const queue = new bull.Queue<InboxJob>(protocol.webhook, { connection, prefix: inbox.prefix });
  queue.on('error', () => undefined);
  // A board's pending events and passed numbers are remembered as long as svc may still retry one
  // of its events (a day), and at least as long as an event of it may be retried here (its last
  // handed-over sequence, much longer: BOARD_PLACE_KEPT_MS).
  const boardTtlMs = Math.max(DEFAULT_RETENTION_MS, inbox.retryForMs + inbox.gapWaitMs);
  const order = new BoardOrder(connection, `${inbox.prefix}:${protocol.webhook}:`, inbox.gapWaitMs, boardTtlMs);
  const running = new Set<DeliveryScope>();
  const telemetry = new DeliveryTelemetry(protocol.webhook, fixedSecrets);
  // The failures this worker's handlers caused, already logged and recorded by the processor.
  const ownFailures = new WeakSet<Error>();

  const wake = async (jobId: string | null, self: string) => {
    if (jobId === null || jobId === self) return;
    const next = await queue.getJob(jobId);
    // Only a delayed job can be promoted; one already waiting or running needs no wake.
    await next?.promote().catch(() => undefined);
  };

  const tell = (record: DeliveryRecord) => {
    for (const listener of listeners) {
      Promise.resolve()
        .then(() => listener(record))
        .catch((err: unknown) => quietly(() => logger.error({ err: safeError(err) }, 'an onDelivery listener failed')));
    }
  };

  const processor = async (job: Job<InboxJob>, token?: string): Promise<void> => {
    const data = job.data;
    const jobId = job.id!;
    const attempt = job.attemptsMade + 1;
    const placed = data.board !== undefined && data.sequence !== undefined;
    let turn: Turn = { run: true };
    if (placed && data.ordered !== true) await passBoard(data, jobId);
    if (placed && data.ordered === true) {
      turn = await order.start(data.board!, jobId, data.sequence!, Date.now());
      if (!turn.run && 'handled' in turn) {
        quietly(() => logger.info({ deliveryId: data.deliveryId, kind: data.kind, attempt }, 'delivery handled already (its worker stopped before the job was marked processed); not run again'));
        await wake(await order.finish(data.board!, jobId, data.sequence!, true), jobId);
        return;
      }
      if (!turn.run) {
        await job.moveToDelayed(Date.now() + (turn.waitMs > 0 ? turn.waitMs : RECHECK_MS), token);
        // The predecessor may have ended between the check and the move: then nobody would promote us.
        const now = await order.start(data.board!, jobId, data.sequence!, Date.now(), true);
        if (now.run) await job.promote().catch(() => undefined);
        throw new bull.DelayedError();
      }
    }
    const started = performance.now();
    const trace = telemetry.process({ deliveryId: data.deliveryId, kind: data.kind, attempt, receivedIn: data.trace });
    const hidden = lookup !== undefined && data.verifiedBy !== undefined ? await secretsOf(lookup, data.verifiedBy) : NO_SECRETS;
    const ended = await runJob(data, attempt, turn.run ? turn.gap : undefined, trace, hidden);
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const final = attempt >= (job.opts.attempts ?? 1);
    const outcome: QueueOutcome = ended.state === 'succeeded' ? 'processed' : final ? 'dead' : 'retried';
    // An abandoned run is told apart from a handler that failed, as in direct mode.
    const code = ended.state !== 'failed' ? undefined : isSvcWebhookError(ended.error) && ended.error.code === 'handler_timeout' ? 'handler_timeout' : 'handler_failed';
    trace?.end(outcome, code);
    // Past this point the handlers have run: nothing here may fail the job, or they would run again.
    if (placed && data.ordered === true) {
      try {
        // The board moves on past a handled event and past a dead letter; a retried one keeps its place.
        if (outcome === 'retried') await order.release(data.board!, jobId);
        else await wake(await order.finish(data.board!, jobId, data.sequence!, outcome === 'processed'), jobId);
      } catch (err) {
        // The board's next event finds this job finished (or dead) and takes over its place itself.
        quietly(() => logger.warn({ err: safeError(err), deliveryId: data.deliveryId }, 'could not record the board order; the next event of the board will'));
      }
    }
    quietly(() => {
      const log = childDropping(logger, { deliveryId: data.deliveryId, kind: data.kind, attempt }, hidden);
      const fields = { queue: outcome, durationMs };
      if (ended.state === 'succeeded') log.info(fields, 'delivery processed');
      else if (outcome === 'retried') log.warn({ ...fields, err: safeError(ended.error), retryInMs: retryDelay(attempt, inbox.retryDelayMs, inbox.maxRetryDelayMs) }, 'delivery attempt failed; it will be retried');
      else log.error({ ...fields, err: safeError(ended.error), attempts: attempt }, 'delivery failed for the last time; kept as a dead letter (svc-webhooks inbox list)');
    });
    if (listeners.length > 0) {
      const failed = ended.state === 'failed';
      tell({
        webhook: data.webhook,
        deliveryId: data.deliveryId,
        kind: data.kind,
        outcome: failed ? 'rejected' : 'handled',
        status: failed ? 500 : 200,
        ...(code === undefined ? {} : { code }),
        durationMs,
        receivedAt: data.receivedAt,
        verified: true,
        queue: outcome,
        attempt,
      });
    }
    // What BullMQ records as the last error: a plain copy, whatever the handler threw.
    if (ended.state === 'failed') {
      const copy = safeError(ended.error);
      ownFailures.add(copy);
      throw copy;
    }
  };

  /**
   * An event of a kind that is not ordered is handled at once; its sequence is marked as passed when
   * it is taken up, so that the ordered events after it wait neither for its handlers nor for its retries.
   */
  async function passBoard(data: InboxJob, jobId: string): Promise<void> {
    try {
      await wake(await order.pass(data.board!, data.sequence!), jobId);
    } catch (err) {
      // Its ordered successors then wait for its sequence at most gapWaitMs, and report it as a gap.
      quietly(() => logger.warn({ err: safeError(err), deliveryId: data.deliveryId }, 'could not record the board order; the next event of the board will wait for this one'));
    }
  }

  /** Rebuilds the delivery from the job and runs its handlers; a job that no longer parses fails like a handler. */
  async function runJob(data: InboxJob, attempt: number, gap: SequenceGap | undefined, trace: ProcessTrace | undefined, hidden: readonly string[]): Promise<SettledResult> {
    let ctx: DeliveryScope | undefined;
    try {
      const payload = parseJson(Buffer.from(data.body, 'utf8'));
      const delivery = protocol.delivery(payload, headersOnly(data.headers), jobs.signatureOf(data), data.receivedAt);
      ctx = protocol.context(delivery, [delivery.id, delivery.kind, undefined, undefined, data.receivedAt, logger, attempt, gap]);
      DeliveryScope.dropFromLog(ctx, hidden);
      running.add(ctx);
      const scope = ctx;
      const calls = protocol.calls(delivery, ctx);
      const result = runHandlers(trace === undefined ? calls : trace.handlers(calls, hidden), abandonAfterMs, () => DeliveryScope.abort(scope));
      const run = isThenable<RunResult>(result) ? await result : result;
      if (run.state !== 'timed_out') return run;
      // The run goes on unwatched; the delivery is retried like any failure (and may then run beside it).
      void run.settled.then((end) => scope.log.warn({ state: end.state }, 'an abandoned run settled after all'));
      return { state: 'failed', error: new SvcWebhookError('handler_timeout', `handlers did not settle within abandonAfter (${abandonAfterMs} ms); the run is abandoned`) };
    } catch (error) {
      return { state: 'failed', error };
    } finally {
      if (ctx !== undefined) running.delete(ctx);
    }
  }

  const worker: Worker<InboxJob> = new bull.Worker<InboxJob>(protocol.webhook, processor, {
    connection,
    prefix: inbox.prefix,
    concurrency: settings.concurrency,
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    maxStalledCount: settings.maxStalledCount,
    settings: { backoffStrategy: (attemptsMade: number) => retryDelay(attemptsMade, inbox.retryDelayMs, inbox.maxRetryDelayMs) },
  });
  worker.on('error', (err) => logger.error({ err: safeError(err) }, 'inbox worker: redis error; retrying'));
  worker.on('stalled', (jobId: string) => logger.warn({ jobId }, 'a delivery was taken back from a worker that stopped answering; it runs again'));
  worker.on('failed', (job, err) => {
    if (job === undefined || ownFailures.has(err)) return;
    void foreignFailure(job, err).catch((e: unknown) => logger.error({ err: safeError(e), jobId: job.id }, 'inbox worker: could not record a dead letter'));
  });

  /**
   * A failure that did not come from the handlers: BullMQ failed the job itself, when its workers
   * kept disappearing mid-run more than `maxStalledCount` times. It is a dead letter like any other.
   */
  async function foreignFailure(job: Job<InboxJob>, err: Error): Promise<void> {
    const data = job.data;
    const fields = { deliveryId: data.deliveryId, kind: data.kind, attempt: job.attemptsMade };
    if (job.finishedOn === undefined) return; // retried: not a dead letter
    if (data.board !== undefined && data.sequence !== undefined && data.ordered === true) await wake(await order.finish(data.board, job.id!, data.sequence, false), job.id!);
    logger.error({ ...fields, queue: 'dead', err: safeError(err) }, 'delivery failed for the last time; kept as a dead letter (svc-webhooks inbox list)');
    if (listeners.length > 0) {
      tell({ webhook: data.webhook, deliveryId: data.deliveryId, kind: data.kind, outcome: 'rejected', status: 500, code: 'handler_failed', durationMs: 0, receivedAt: data.receivedAt, verified: true, queue: 'dead', attempt: fields.attempt });
    }
  }

  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        for (const ctx of running) DeliveryScope.abort(ctx);
        await worker.close();
        await queue.close().catch(() => undefined);
        await connection.quit().catch(() => connection.disconnect());
      })();
      return closing;
    },
  };
}

/**
 * The secrets of the board (bot) that verified a delivery, dropped from the lines logged about it.
 * A worker may not have looked it up yet: it asks the resolver first. A resolver that fails leaves
 * the other redaction.
 */
async function secretsOf(lookup: SecretLookup, id: string): Promise<readonly string[]> {
  try {
    const keys = lookup.keysFor(id);
    if (isThenable(keys)) await keys;
  } catch {
    // Unknown or unavailable now: its secrets cannot be in the handlers' hands either.
  }
  return lookup.secretsOf(id);
}

/** Logging must not decide a delivery's fate: a logger that throws has nowhere left to report to. */
function quietly(write: () => void): void {
  try {
    write();
  } catch {
    // Nothing to do: the delivery's outcome stands.
  }
}
