import { commitEnqueued, commitHandled, holdUntilSettled, releaseClaim, type Claim } from '../dedup/claim';
import { SvcWebhookError } from '../errors';
import type { Handoff } from '../inbox/accepted-delivery';
import type { Delivery } from '../internal/delivery';
import { isThenable } from '../internal/value-checks';
import { dispatch, type RunResult } from '../route/dispatch';
import type { Arrival } from './arrival';
import { handlerFailure } from './handler-failure';
import type { Settings } from './settings';
import type { WebhookProtocol } from './webhook-protocol';

/** A delivery the receiver claimed: what its handlers (or the inbox) and its claim's end need. */
export interface Claimed<R, S, D extends Delivery> {
  readonly arrival: Arrival<R>;
  readonly delivery: D;
  readonly body: Uint8Array;
  /** The claim it holds in the de-dup store. */
  readonly claim: Claim;
  /** The verifying board's (bot's) secrets, with a resolver. */
  readonly verifierSecrets: readonly string[];
  readonly protocol: WebhookProtocol<S, D>;
  readonly settings: Settings;
}

/**
 * Direct mode: runs the handlers in the request, then records the delivery as done, or releases
 * its claim (failed), or keeps it held while handlers that outlived their deadline still run.
 * Throws the refusal (`handler_failed`, `handler_timeout`, or a transaction's own) to answer with.
 */
export async function runHandlersOf<R, S, D extends Delivery>(c: Claimed<R, S, D>): Promise<void> {
  const { arrival: r, delivery, settings, claim, verifierSecrets } = c;
  const { ctx, run: running } = dispatch({
    delivery,
    route: c.protocol.route,
    scope: { source: r.req, access: r.access, receivedAt: r.receivedAt, logger: settings.logger },
    secrets: verifierSecrets,
    // The deadline counts from arrival: the sender's 10 s include reading, verifying and claiming.
    deadlineMs: Math.max(1, settings.timeoutMs - (performance.now() - r.started)),
    claim,
    ...(r.trace === undefined ? {} : { wrap: (calls) => r.trace!.handlers(calls, delivery.id, delivery.kind, verifierSecrets) }),
  });
  const run = isThenable<RunResult>(running) ? await running : running;
  if (run.state === 'timed_out') {
    holdUntilSettled(claim, { settled: run.settled, abandonAfterMs: settings.abandonAfterMs, log: ctx.log });
    throw new SvcWebhookError('handler_timeout', `handlers did not finish within ${settings.timeoutMs} ms of the request's arrival`, {
      retryAfter: retryAfter(settings),
    });
  }
  if (run.state === 'failed') {
    const released = releaseClaim(claim);
    if (released !== undefined) await released;
    throw handlerFailure(run.error);
  }
  const committed = commitHandled(claim);
  if (committed !== undefined) await committed;
}

/**
 * Inbox mode: hands the delivery to the queue and records it as done; a queue that refuses it
 * (503 `inbox_unavailable`) has its claim released, so that svc's retry may enqueue it.
 */
export async function enqueue<R, S, D extends Delivery>(c: Claimed<R, S, D>, handoff: Handoff<D>): Promise<void> {
  const { arrival: r } = c;
  try {
    await handoff({ delivery: c.delivery, body: c.body, request: r.facts, receivedAt: r.receivedAt, trace: r.trace?.carrier() });
  } catch (err) {
    const released = releaseClaim(c.claim);
    if (released !== undefined) await released;
    throw err;
  }
  commitEnqueued(c.claim);
}

/** Seconds after which svc may retry a delivery that is busy or outlived its deadline. */
export function retryAfter(settings: Pick<Settings, 'timeoutMs'>): number {
  return Math.max(1, Math.ceil(settings.timeoutMs / 1000));
}
