import type { Job } from 'bullmq';
import { SvcWebhookError, isSvcWebhookError } from '../errors';
import { BoardOrder, logGapWait, type Turn } from '../inbox/board-order';
import { headersOnly, type InboxJob } from '../inbox/inbox-job';
import { retryDelay, type InboxSettings } from '../inbox/inbox-options';
import type { Delivery } from '../internal/delivery/delivery';
import { NO_SECRETS, scrubbedError } from '../internal/logging/log-redaction';
import type { SequenceGap } from '../ordering/board-sequence-tracker';
import { isThenable } from '../internal/checks/value-checks';
import { safeError } from '../internal/logging/safe-error';
import { quietly, type DeliveryReport } from '../observe/delivery-report';
import type { QueueOutcome } from '../internal/delivery/delivery-record';
import type { DeliveryTelemetry, ProcessTrace } from '../observe/telemetry';
import { parseJson } from '../parse/parse-json';
import type { DeliveryScope } from '../route/delivery-route';
import { dispatch } from '../route/dispatch';
import type { RunResult, SettledResult } from '../route/dispatch';
import type { SecretLookup } from '../verify/secret-resolver';
import type { Settings } from './settings';
import type { WebhookProtocol } from './webhook-protocol';

/** What one processing attempt needs of the worker. */
export interface AttemptParts<S, D extends Delivery> {
  readonly inbox: InboxSettings;
  readonly protocol: WebhookProtocol<S, D>;
  readonly settings: Pick<Settings, 'logger' | 'fixedSecrets' | 'abandonAfterMs' | 'secrets'>;
  readonly report: DeliveryReport;
  readonly telemetry: DeliveryTelemetry;
  readonly order: BoardOrder;
  /** Contexts whose handlers run now: the worker's close() aborts them. */
  readonly running: Set<DeliveryScope>;
  /** Wakes the board's next event (a delayed job) when this one ends. */
  readonly wake: (next: string | null, self: string) => Promise<void>;
  /** Asks BullMQ to run the job later, when its turn may have come. */
  readonly waitForTurn: (job: Job<InboxJob>, token: string | undefined, turn: { waitMs: number }) => Promise<never>;
}

const RUN: Turn = Object.freeze({ run: true });

/** Whether an error is one this worker threw for a failed attempt (already logged and reported). */
export type OwnFailures = WeakSet<Error>;

/**
 * One processing attempt of a queued delivery: its board's turn (board order), its handlers run
 * through the one dispatch, its report. Past the handlers nothing here may fail the job, or they
 * would run again; a failed attempt throws a scrubbed copy of what the handlers threw, which BullMQ
 * keeps as the job's last error.
 */
export function inboxAttempt<S, D extends Delivery>(parts: AttemptParts<S, D>, own: OwnFailures) {
  const { inbox, settings, report, telemetry, order, wake } = parts;
  return async (job: Job<InboxJob>, token?: string): Promise<void> => {
    const data = job.data;
    const jobId = job.id!;
    const attempt = job.attemptsMade + 1;
    // An event outside board order runs at once: its handlers start before the first await, as
    // a direct delivery's do (close() then finds them running).
    const turn =
      data.board === undefined || data.sequence === undefined ? RUN : await turnOf(parts, job as Job<InboxJob & { board: string; sequence: number }>, token);
    if (turn === undefined) return;
    const started = performance.now();
    const trace = telemetry.process({ deliveryId: data.deliveryId, kind: data.kind, attempt, receivedIn: data.trace });
    const lookup = settings.secrets.lookup;
    const verifierSecrets = lookup !== undefined && data.verifiedBy !== undefined ? await secretsOf(lookup, data.verifiedBy) : NO_SECRETS;
    const ended = await runJob(parts, { data, attempt, gap: turn.run ? turn.gap : undefined, trace, verifierSecrets });
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const outcome: Exclude<QueueOutcome, 'enqueued' | 'duplicate'> =
      ended.state === 'succeeded' ? 'processed' : attempt >= (job.opts.attempts ?? 1) ? 'dead' : 'retried';
    // An abandoned run is told apart from a handler that failed, as in direct mode.
    const code =
      ended.state !== 'failed' ? undefined : isSvcWebhookError(ended.error) && ended.error.code === 'handler_timeout' ? 'handler_timeout' : 'handler_failed';
    trace?.end(outcome, code);
    if (isOrdered(data)) {
      try {
        // The board moves on past a handled event and past a dead letter; a retried one keeps its place.
        if (outcome === 'retried') await order.release(data.board, jobId);
        else await wake(await order.finish(data.board, jobId, data.sequence, outcome === 'processed'), jobId);
      } catch (err) {
        // The board's next event finds this job finished (or dead) and takes over its place itself.
        quietly(() =>
          settings.logger.warn({ err: safeError(err), deliveryId: data.deliveryId }, 'could not record the board order; the next event of the board will'),
        );
      }
    }
    const error = ended.state === 'failed' ? ended.error : undefined;
    report.attempt({
      delivery: data,
      attempt,
      outcome,
      code,
      error,
      durationMs,
      verifierSecrets,
      ...(outcome === 'retried' ? { retryInMs: retryDelay(attempt, inbox.retryDelayMs, inbox.maxRetryDelayMs) } : {}),
    });
    if (ended.state === 'failed') {
      // What BullMQ keeps as the last error (a dead letter's reason and stack): a plain copy,
      // scrubbed of the secrets as every line about it is.
      const copy = scrubbedError(safeError(ended.error), [...settings.fixedSecrets, ...verifierSecrets]);
      own.add(copy);
      throw copy;
    }
  };
}

/** An ordered event of a board, waiting for its turn in `sequence` order. */
function isOrdered(data: InboxJob): data is InboxJob & { board: string; sequence: number; ordered: true } {
  return data.board !== undefined && data.sequence !== undefined && data.ordered === true;
}

/**
 * Whether the job runs now: an ordered event runs on its board's turn (else it is delayed, and
 * BullMQ runs it again later); an event handled already by a worker that stopped runs no more.
 */
async function turnOf<S, D extends Delivery>(
  parts: AttemptParts<S, D>,
  job: Job<InboxJob & { board: string; sequence: number }>,
  token: string | undefined,
): Promise<Turn | undefined> {
  const { order, wake, settings } = parts;
  const data = job.data;
  const jobId = job.id!;
  if (data.ordered !== true) {
    await passBoard(parts, data, jobId);
    return RUN;
  }
  const turn = await order.start(data.board, jobId, data.sequence, Date.now());
  if (!turn.run && 'handled' in turn) {
    quietly(() =>
      settings.logger.info(
        { deliveryId: data.deliveryId, kind: data.kind, attempt: job.attemptsMade + 1 },
        'delivery handled already (its worker stopped before the job was marked processed); not run again',
      ),
    );
    await wake(await order.finish(data.board, jobId, data.sequence, true), jobId);
    return undefined;
  }
  // Stryker disable next-line LogicalOperator: only a waiting turn has `missing`, always set (test/mutation/EQUIVALENT.receive.md)
  if (!turn.run && 'missing' in turn && turn.missing !== undefined) logGapWait(settings.logger, data, { waitMs: turn.waitMs, missing: turn.missing });
  if (!turn.run) return parts.waitForTurn(job, token, turn);
  return turn;
}

/**
 * An event of a kind that is not ordered is handled at once; its sequence is marked as passed when
 * it is taken up, so that the ordered events after it wait neither for its handlers nor for its retries.
 */
async function passBoard<S, D extends Delivery>({ order, wake, settings }: AttemptParts<S, D>, data: InboxJob, jobId: string): Promise<void> {
  try {
    await wake(await order.pass(data.board!, data.sequence!), jobId);
  } catch (err) {
    // Its ordered successors then wait for its sequence at most gapWaitMs, and report it as a gap.
    quietly(() =>
      settings.logger.warn(
        { err: safeError(err), deliveryId: data.deliveryId },
        'could not record the board order; the next event of the board will wait for this one',
      ),
    );
  }
}

interface JobRun {
  readonly data: InboxJob;
  readonly attempt: number;
  readonly gap: SequenceGap | undefined;
  readonly trace: ProcessTrace | undefined;
  readonly verifierSecrets: readonly string[];
}

/** Rebuilds the delivery from the job and runs its handlers; a job that no longer parses fails like a handler. */
async function runJob<S, D extends Delivery>(
  { protocol, settings, running }: AttemptParts<S, D>,
  { data, attempt, gap, trace, verifierSecrets }: JobRun,
): Promise<SettledResult> {
  let ctx: DeliveryScope | undefined;
  try {
    // Stryker disable next-line StringLiteral: Buffer.from reads an empty encoding as UTF-8 (test/mutation/EQUIVALENT.receive.md)
    const payload = parseJson(Buffer.from(data.body, 'utf8'));
    const verified = { by: data.verifiedBy, ...(data.timestamp === undefined ? {} : { timestamp: data.timestamp }) };
    const delivery = protocol.check(payload, { request: headersOnly(data.headers), verified, nowMs: data.receivedAt });
    const dispatched = dispatch({
      delivery,
      route: protocol.route,
      scope: { receivedAt: data.receivedAt, logger: settings.logger, attempt, gap },
      secrets: verifierSecrets,
      // No sender waits on a worker, but a run that never settles would hold its job (and, in board
      // order, its board) for ever: past abandonAfterMs the attempt counts as failed.
      deadlineMs: settings.abandonAfterMs,
      ...(trace === undefined ? {} : { wrap: (calls) => trace.handlers(calls, verifierSecrets) }),
    });
    const scope = (ctx = dispatched.ctx);
    running.add(scope);
    const run = isThenable<RunResult>(dispatched.run) ? await dispatched.run : dispatched.run;
    if (run.state !== 'timed_out') return run;
    // The run goes on unwatched; the delivery is retried like any failure (and may then run beside it).
    void run.settled.then((end) => scope.log.warn({ state: end.state }, 'an abandoned run settled after all'));
    return {
      state: 'failed',
      error: new SvcWebhookError('handler_timeout', `handlers did not settle within abandonAfterMs (${settings.abandonAfterMs} ms); the run is abandoned`),
    };
  } catch (error) {
    return { state: 'failed', error };
  } finally {
    if (ctx !== undefined) running.delete(ctx);
  }
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
