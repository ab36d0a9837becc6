import { attempt, commitWithRetry, holdClaim, releaseClaim, type HeldClaim, type StoreFailure } from '../dedup/claim';
import type { WebhookLogger } from '../internal/logger';
import { safeError } from '../internal/safe-error';
import { isThenable } from '../internal/thenable';
import type { SettledResult } from '../route/run-handlers';
import type { Slot } from './in-flight';

/** A claimed delivery whose handlers ran (or which the inbox took): how its claim ends. */
export interface ClaimToSettle {
  readonly held: HeldClaim;
  /** `performance.now()` at the request's arrival: the lease counts from the claim, just after. */
  readonly started: number;
  readonly leaseMs: number;
  /** The delivery's place among those in flight, for work that goes on after the answer. */
  readonly slot: Slot;
}

/**
 * Records the delivery as done; synchronous when the store answers so (the memory store). The
 * handlers did run: a commit that fails is answered 200 and retried in the background while the
 * lease keeps retries away, so a store that blinks does not make a repeat run them again.
 */
export function commitHandled(c: ClaimToSettle): void | Promise<void> {
  const committed = attempt(() => c.held.store.commit(c.held.id, c.held.token));
  return isThenable<StoreFailure>(committed) ? committed.then((failed) => retryLater(c, failed)) : retryLater(c, committed);
}

/**
 * Inbox mode: the queue holds the delivery, so the answer does not wait for the store's record.
 * The commit is sent now (before a later request's claim) and retried in the background while the
 * lease keeps repeats away; a repeat that comes first is answered 409 and retried by svc.
 */
export function commitEnqueued(c: ClaimToSettle): void {
  const committed = attempt(() => c.held.store.commit(c.held.id, c.held.token));
  if (!isThenable<StoreFailure>(committed)) return retryLater(c, committed);
  c.slot.handOver(committed.then((failed) => commitWithRetry(c.held, c.started + c.leaseMs, failed)));
}

function retryLater(c: ClaimToSettle, failed: StoreFailure): void {
  if (failed) c.slot.handOver(commitWithRetry(c.held, c.started + c.leaseMs, failed));
}

/** Handlers that outlived their deadline, still running. */
export interface LateRun {
  readonly settled: Promise<SettledResult>;
  /** From the request's arrival, in ms: past it the run is abandoned. */
  readonly abandonAfterMs: number;
  /** The delivery's own logger (`ctx.log`). */
  readonly log: WebhookLogger;
}

/**
 * Handlers outlived their deadline: the claim stays held (its lease renewed) until they settle, so
 * a retry cannot run them concurrently; then it is committed or released. A run still unsettled
 * after `abandonAfterMs` is given up: its claim is released for the sender's next retry.
 */
export function holdUntilSettled(c: ClaimToSettle, run: LateRun): void {
  const { held, leaseMs } = c;
  let abandoned = false;
  let done!: () => void;
  c.slot.handOver(new Promise<void>((resolve) => (done = resolve)));
  const hold = holdClaim(held, {
    leaseMs,
    abandonAfterMs: run.abandonAfterMs - (performance.now() - c.started),
    onAbandon: () => {
      abandoned = true;
      run.log.error({ abandonAfterMs: run.abandonAfterMs }, 'handlers did not settle within abandonAfterMs; the run is abandoned and the claim released, so the next retry runs them again');
      done();
    },
  });
  const settle = run.settled.then(async (end) => {
    hold.stop();
    if (end.state === 'failed') {
      run.log.error({ err: safeError(end.error) }, abandoned ? 'an abandoned run failed' : 'handlers failed after their deadline; the claim is released for the retry');
      if (!abandoned) await releaseClaim(held);
    } else {
      // Recorded even when abandoned: the store's token check keeps a retry's own claim intact.
      run.log.info(abandoned ? 'an abandoned run finished; the delivery is recorded as handled' : 'handlers finished after their deadline; the delivery is recorded as handled');
      // The last renewal was at most a third of a lease ago.
      await commitWithRetry(held, performance.now() + (leaseMs * 2) / 3, await attempt(() => held.store.commit(held.id, held.token)));
    }
  });
  void settle.catch(() => undefined).finally(() => {
    if (!abandoned) done();
  });
}
