import type { WebhookLogger } from '../internal/logging/logger';
import { SvcWebhookError } from '../errors';
import { safeError } from '../internal/logging/safe-error';
import { isThenable } from '../internal/checks/value-checks';
import type { ClaimResult, DeliveryStore } from './delivery-store';
import type { Failure, ParkingLot } from './parking-lot';

/**
 * The whole life of a delivery's claim in the de-dup store: taken before the handlers run, then
 * committed (handled), released (failed, so the retry runs them again), or held with its lease
 * renewed while handlers that outlived their deadline still run. A store may answer synchronously
 * (the memory store does): then no promise is made on the hot path.
 */

/** The store failed: the delivery fails closed (503), and svc retries it. */
export function storeUnavailable(err: unknown): SvcWebhookError {
  return new SvcWebhookError('store_unavailable', 'the de-duplication store is unavailable; retry later', { cause: err, retryAfter: 5 });
}

/** Claims a delivery; a store that fails makes the delivery fail closed (503, retried later). */
export function claimDelivery(store: DeliveryStore, id: string, leaseMs: number): ClaimResult | Promise<ClaimResult> {
  let answer: ClaimResult | Promise<ClaimResult>;
  try {
    answer = store.claim(id, leaseMs);
  } catch (err) {
    throw storeUnavailable(err);
  }
  return isThenable<ClaimResult>(answer)
    ? Promise.resolve(answer).catch((err: unknown) => {
        throw storeUnavailable(err);
      })
    : answer;
}

/** A lookup of a delivery's failures that failed: the store's error, kept as a value so that a lookup made beside the claim never rejects unheard. */
export class FailedLookup {
  constructor(readonly error: unknown) {}
}

/** What a lookup of a delivery's failures found. */
export type FailureLookup = Failure | undefined | FailedLookup;

/**
 * Looks up when a delivery first failed, in the store's parking lot. Started beside the claim, so
 * that a shared store answers both in one round trip's time; synchronous for the memory store.
 * Never throws nor rejects: a lot that fails answers a FailedLookup.
 */
export function lookUpFailure(lot: ParkingLot, id: string): FailureLookup | Promise<FailureLookup> {
  try {
    const found = lot.failure(id);
    return isThenable<Failure | undefined>(found) ? Promise.resolve(found).catch((error: unknown) => new FailedLookup(error)) : found;
  } catch (error) {
    return new FailedLookup(error);
  }
}

/** The claimed delivery's lookup failed: its claim released, the 503 to answer (svc retries; nothing is lost). */
export async function releasedAfter(held: HeldClaim, failed: FailedLookup): Promise<SvcWebhookError> {
  await releaseClaim(held);
  return storeUnavailable(failed.error);
}

/** One store call's end: `undefined` when it succeeded, else what it threw (which may itself be `undefined`). */
export type StoreFailure = { readonly error: unknown } | undefined;

/** Calls the store and reports a failure as a value, synchronously when the store answered so. */
export function attempt(call: () => unknown): StoreFailure | Promise<StoreFailure> {
  try {
    const done = call();
    if (isThenable(done))
      return Promise.resolve(done).then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
  } catch (error) {
    return { error };
  }
  return undefined;
}

/** A claim a delivery holds: what committing, releasing and renewing it need. */
export interface HeldClaim {
  readonly store: DeliveryStore;
  /** The delivery id. */
  readonly id: string;
  /** The token the claim was given. */
  readonly token: string;
  /** Where a store's failure is reported. */
  readonly logger: WebhookLogger;
}

/** Releases the claim of a failed delivery, so the sender's retry runs the handlers again. */
export function releaseClaim({ store, id, token, logger }: HeldClaim): void | Promise<void> {
  const report = (failed: StoreFailure) => {
    // Not fatal: the lease lapses and the retry after it runs the handlers.
    if (failed) logger.error({ err: safeError(failed.error), deliveryId: id }, 'could not release a failed delivery in the de-dup store; its lease will lapse');
  };
  const released = attempt(() => store.release(id, token));
  return isThenable<StoreFailure>(released) ? released.then(report) : report(released);
}

const FIRST_RETRY_MS = 50;
const LONGEST_RETRY_MS = 2_000;

/**
 * Commits a delivery whose handlers succeeded, retrying a failed commit (a store restarting, a
 * timeout) until `untilMs` (a `performance.now()` time: when the claim's lease ends, after which
 * another attempt may hold the delivery). The commit is token-checked by the store, so a late retry
 * cannot overwrite another attempt's claim. Resolves `true` when recorded, `false` when given up.
 */
export async function commitWithRetry({ store, id, token, logger }: HeldClaim, untilMs: number, first?: StoreFailure): Promise<boolean> {
  let failed = first;
  let waitMs = FIRST_RETRY_MS;
  while (failed) {
    const leftMs = untilMs - performance.now();
    if (leftMs <= 0) {
      logger.error(
        { err: safeError(failed.error), deliveryId: id },
        'could not record a handled delivery in the de-dup store before its lease ended; a repeat of it would run the handlers again',
      );
      return false;
    }
    await sleep(Math.min(waitMs, leftMs));
    waitMs = Math.min(waitMs * 2, LONGEST_RETRY_MS);
    failed = await attempt(() => store.commit(id, token));
  }
  return true;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** How long a held claim is renewed and when it is given up. */
export interface HoldTerms {
  readonly leaseMs: number;
  /** From now, in ms: past it the run is abandoned. */
  readonly abandonAfterMs: number;
  /** Told once, when the run is abandoned. */
  readonly onAbandon: () => void;
}

/** What keeps a claim while handlers that outlived their deadline still run. */
export interface ClaimHold {
  /** Stops renewing (the handlers settled). */
  stop(): void;
}

/**
 * Keeps a claim alive while handlers that outlived their deadline still run: renews the lease at
 * once and then at a third of its length. (The deadline is shorter than the lease, so a run that
 * settles in time needs no renewal.) A renewal that fails is logged; the lease then lapses as after
 * a crash. A run still unsettled after `abandonAfterMs` is abandoned: renewal stops, the claim is
 * released so that the sender's next retry runs the handlers again, and `onAbandon` is called.
 */
export function holdClaim(held: HeldClaim, { leaseMs, abandonAfterMs, onAbandon }: HoldTerms): ClaimHold {
  const { store, id, token, logger } = held;
  const extend = store.extend;
  const renew = () =>
    void Promise.resolve(attempt(() => extend!.call(store, id, token, leaseMs))).then((failed) => {
      if (failed) logger.warn({ err: safeError(failed.error), deliveryId: id }, 'could not renew the claim of a running delivery');
    });
  let renewal: NodeJS.Timeout | undefined;
  if (extend !== undefined) {
    renew();
    renewal = setInterval(renew, Math.max(1, Math.floor(leaseMs / 3)));
    renewal.unref();
  }
  const abandon = setTimeout(
    () => {
      clearInterval(renewal);
      onAbandon();
      void releaseClaim(held);
    },
    Math.max(0, abandonAfterMs),
  );
  abandon.unref();
  return {
    stop() {
      clearInterval(renewal);
      clearTimeout(abandon);
    },
  };
}

/**
 * A claim the receiver holds for one delivery: the store's record of it, and where work that goes
 * on after the answer (a commit retried, handlers past their deadline) is handed over.
 */
export interface Claim extends HeldClaim {
  /** `performance.now()` at the request's arrival: the lease counts from the claim, just after. */
  readonly started: number;
  readonly leaseMs: number;
  /** The delivery's place among those in flight: work handed over keeps it counted until it settles. */
  readonly slot: { keepUntil(work: Promise<unknown>): void };
}

/**
 * Records the delivery as done; synchronous when the store answers so (the memory store). The
 * handlers did run: a commit that fails is answered 200 and retried in the background while the
 * lease keeps retries away, so a store that blinks does not make a repeat run them again.
 */
export function commitHandled(c: Claim): void | Promise<void> {
  const committed = attempt(() => c.store.commit(c.id, c.token));
  return isThenable<StoreFailure>(committed) ? committed.then((failed) => retryLater(c, failed)) : retryLater(c, committed);
}

/**
 * Inbox mode: the queue holds the delivery, so the answer does not wait for the store's record.
 * The commit is sent now (before a later request's claim) and retried in the background while the
 * lease keeps repeats away; a repeat that comes first is answered 409 and retried by svc.
 */
export function commitEnqueued(c: Claim): void {
  const committed = attempt(() => c.store.commit(c.id, c.token));
  if (!isThenable<StoreFailure>(committed)) return retryLater(c, committed);
  c.slot.keepUntil(committed.then((failed) => commitWithRetry(c, c.started + c.leaseMs, failed)));
}

function retryLater(c: Claim, failed: StoreFailure): void {
  if (failed) c.slot.keepUntil(commitWithRetry(c, c.started + c.leaseMs, failed));
}

/** Handlers that outlived their deadline, still running. */
export interface LateRun {
  /** How the handlers ended, once they have. */
  readonly settled: Promise<{ readonly state: 'succeeded' } | { readonly state: 'failed'; readonly error: unknown }>;
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
export function holdUntilSettled(c: Claim, run: LateRun): void {
  const { leaseMs } = c;
  let abandoned = false;
  let done!: () => void;
  c.slot.keepUntil(new Promise<void>((resolve) => (done = resolve)));
  const hold = holdClaim(c, {
    leaseMs,
    abandonAfterMs: run.abandonAfterMs - (performance.now() - c.started),
    onAbandon: () => {
      abandoned = true;
      run.log.error(
        { abandonAfterMs: run.abandonAfterMs },
        'handlers did not settle within abandonAfterMs; the run is abandoned and the claim released, so the next retry runs them again',
      );
      done();
    },
  });
  const settle = run.settled.then(async (end) => {
    hold.stop();
    if (end.state === 'failed') {
      run.log.error(
        { err: safeError(end.error) },
        abandoned ? 'an abandoned run failed' : 'handlers failed after their deadline; the claim is released for the retry',
      );
      if (!abandoned) await releaseClaim(c);
    } else {
      // Recorded even when abandoned: the store's token check keeps a retry's own claim intact.
      run.log.info(
        abandoned
          ? 'an abandoned run finished; the delivery is recorded as handled'
          : 'handlers finished after their deadline; the delivery is recorded as handled',
      );
      // The last renewal was at most a third of a lease ago.
      await commitWithRetry(c, performance.now() + (leaseMs * 2) / 3, await attempt(() => c.store.commit(c.id, c.token)));
    }
  });
  void settle
    .catch(() => undefined)
    .finally(() => {
      // Stryker disable next-line ConditionalExpression: resolving the slot's promise again does nothing (test/mutation/EQUIVALENT.core.md)
      if (!abandoned) done();
    });
}
