import { attempt, claimDelivery, commitHandled, releaseClaim, storeUnavailable, type StoreFailure } from '../dedup/claim';
import type { Failure, ParkedDelivery, ParkingLot, ParkReason } from '../dedup/parking-lot';
import { SvcWebhookError } from '../errors';
import { keptHeaders } from '../inbox/inbox-job';
import type { Delivery } from '../internal/delivery/delivery';
import { headerText } from '../internal/request/headers';
import { textScrubber } from '../internal/logging/log-redaction';
import type { RequestAccess } from '../internal/request/request-access';
import { safeError } from '../internal/logging/safe-error';
import { isThenable } from '../internal/checks/value-checks';
import type { Arrival, Claimed } from './arrival';
import { retryAfter } from './settings';

/**
 * Parking: svc retries a failing delivery for a day and then drops it, and disables a webhook that
 * failed all day. The store notes when each delivery first failed; an attempt `parkAfterMs` after
 * that is answered 200 and the delivery kept in the store's parking lot, instead of being lost with
 * the webhook's whole queue. A replay runs it again exactly once: under a claim key of its own
 * (parking recorded the delivery's id as done, so that svc's later attempts are duplicates), the
 * handlers, the commit; a second replay of a handled one is a duplicate.
 */

type AnyClaimed = Claimed<unknown, unknown, Delivery>;

/** The header that asks a receiver to replay the parked delivery it names (its id), on a request signed as svc signs one. */
export const REPLAY_HEADER = 'x-svc-webhooks-replay';

/** An error's message, as kept beside a failed or parked delivery: scrubbed of the webhook's secrets and of tokens. */
export function failureText(error: unknown, secrets: readonly string[]): string {
  const cause = error instanceof SvcWebhookError && error.code === 'handler_failed' ? error.cause : error;
  return textScrubber(secrets)(safeError(cause).message).slice(0, 2_000);
}

function secretsOf(c: AnyClaimed): readonly string[] {
  return c.verifierSecrets.length === 0 ? c.settings.fixedSecrets : [...c.settings.fixedSecrets, ...c.verifierSecrets];
}

/**
 * Notes a failed attempt (its handlers threw, or outlived their deadline), so that a later one may
 * park it. A store that cannot note it is logged, not fatal: the delivery is retried as before.
 */
export function noteFailure(c: AnyClaimed, error: unknown): void | Promise<void> {
  const { settings, delivery } = c;
  const lot = settings.parkAfterMs === false ? undefined : settings.store.parking;
  if (lot === undefined) return;
  const report = (failed: StoreFailure) => {
    if (failed)
      settings.logger.error(
        { err: safeError(failed.error), deliveryId: delivery.id },
        'could not note a failed delivery in the parking lot; it will not be parked before svc drops it',
      );
  };
  const noted = attempt(() => lot.noteFailure(delivery.id, c.arrival.receivedAt, failureText(error, secretsOf(c))));
  return isThenable<StoreFailure>(noted) ? noted.then(report) : report(noted);
}

/** The record of a delivery parked now. */
function parkedRecord(c: AnyClaimed, reason: ParkReason, failure: Failure | undefined, lastError: string): ParkedDelivery {
  return {
    id: c.delivery.id,
    webhook: c.protocol.webhook,
    kind: c.delivery.kind,
    reason,
    parkedAt: c.arrival.receivedAt,
    ...(failure === undefined ? {} : { firstFailedAt: failure.firstAt }),
    attempts: failure?.attempts ?? 0,
    lastError,
    // svc's headers that rebuild the delivery, as an inbox job keeps them: never the signature.
    headers: keptHeaders(c.arrival.facts),
    body: c.body,
  };
}

/**
 * This attempt comes `parkAfterMs` or more after the delivery first failed: parks it and commits
 * its claim. Answers whether it parked: a full lot parks nothing (logged), and the handlers run as
 * before. A store that fails throws 503 `store_unavailable` with the claim released, so svc
 * retries and nothing is lost.
 */
export function parkFailing(c: AnyClaimed, failure: Failure): Promise<boolean> {
  return park(c, parkedRecord(c, 'failing', failure, failure.lastError)).catch((err: unknown) => refuseWith(c, storeUnavailable(err)));
}

/**
 * Parks an authentic delivery that failed the schema (`schemaPolicy: 'park'`) at once: answered 200
 * rather than refused with a 400 that svc would retry for a day. A full lot refuses it as before.
 */
export async function parkSchemaViolation(c: AnyClaimed, invalid: SvcWebhookError): Promise<void> {
  const kept = await park(c, parkedRecord(c, 'schema', undefined, failureText(invalid, secretsOf(c)))).catch((err: unknown) =>
    refuseWith(c, storeUnavailable(err)),
  );
  if (!kept) await refuseWith(c, invalid);
}

/** Releases the claim, then throws the refusal: svc's retry may claim the delivery again. */
async function refuseWith(c: AnyClaimed, error: SvcWebhookError): Promise<never> {
  await releaseClaim(c.claim);
  throw error;
}

async function park(c: AnyClaimed, record: ParkedDelivery): Promise<boolean> {
  const { logger } = c.settings;
  const kept = await c.settings.store.parking!.park(record);
  const fields = { deliveryId: record.id, kind: record.kind, reason: record.reason, attempts: record.attempts, firstFailedAt: record.firstFailedAt };
  if (!kept) {
    logger.error(fields, 'the parking lot is full (maxParked): the delivery is not parked and svc keeps retrying it; replay or drop parked deliveries');
    return false;
  }
  await commitHandled(c.claim);
  logger.error(
    { ...fields, lastError: record.lastError },
    record.reason === 'schema'
      ? 'parked a delivery that fails the schema (schemaPolicy park): replay it with `svc-webhooks parked replay` or webhook.parked.replay()'
      : 'parked a delivery that kept failing, before svc drops it: fix the handler, then replay it with `svc-webhooks parked replay` or webhook.parked.replay()',
  );
  return true;
}

/** The parked delivery to replay; 404 `not_parked` when there is none. */
export async function parkedToReplay(lot: ParkingLot | undefined, id: string): Promise<ParkedDelivery> {
  const parked = lot === undefined ? undefined : await lot.get(id);
  if (parked === undefined) throw new SvcWebhookError('not_parked', 'no parked delivery has this id (never parked, dropped, or past its retention)');
  return parked;
}

/** A verified request with X-Svc-Webhooks-Replay: the parked delivery it names, which must be its own. */
export function requestedReplay(c: Pick<AnyClaimed, 'arrival' | 'delivery' | 'settings'>): Promise<ParkedDelivery> {
  const named = headerText(c.arrival.facts, REPLAY_HEADER)!;
  if (named.trim().toLowerCase() !== c.delivery.id)
    return Promise.reject(new SvcWebhookError('delivery_id_mismatch', `the ${REPLAY_HEADER} header names another delivery than the body`));
  return parkedToReplay(c.settings.store.parking, c.delivery.id);
}

/** Runs a parked delivery's handlers (`run`) under the replay's own claim, and records in the lot how it ended. */
export async function replayParked(
  c: Omit<AnyClaimed, 'claim'>,
  parked: ParkedDelivery,
  run: (claimed: AnyClaimed) => Promise<void>,
): Promise<'replayed' | 'duplicate'> {
  const { settings, arrival } = c;
  const lot = settings.store.parking!;
  if (parked.replayedAt !== undefined) return 'duplicate';
  const id = `parked-replay:${parked.id}`;
  const claim = await claimDelivery(settings.store, id, settings.leaseMs);
  if (claim.state === 'done') return 'duplicate';
  if (claim.state === 'busy')
    throw new SvcWebhookError('delivery_in_progress', 'this parked delivery is being replayed by another request', { retryAfter: retryAfter(settings) });
  const held = {
    store: settings.store,
    id,
    token: claim.token,
    logger: settings.logger,
    started: arrival.started,
    leaseMs: settings.leaseMs,
    slot: arrival.slot,
  };
  const claimed = { ...c, claim: held };
  try {
    await run(claimed);
  } catch (err) {
    await lot.park({ ...parked, attempts: parked.attempts + 1, lastError: failureText(err, secretsOf(claimed)) });
    throw err;
  }
  await lot.park({ ...parked, replayedAt: settings.now() });
  return 'replayed';
}

interface ParkedRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  readonly url: string;
}

/** A parked delivery as a request arriving now, at the webhook's path: what a replay in the process runs. */
export function parkedArrival(parked: ParkedDelivery, path: string, at: Pick<Arrival<ParkedRequest>, 'receivedAt' | 'slot'>): Arrival<ParkedRequest> {
  const req = { headers: parked.headers, body: parked.body, url: path };
  return { req, access: PARKED_REQUEST, facts: PARKED_REQUEST.facts(req), started: performance.now(), trace: undefined, ...at };
}

/** How a replayed delivery is read by the handlers' `ctx.request`: the parked headers and body. */
const PARKED_REQUEST: RequestAccess<ParkedRequest> = {
  facts: (r) => ({ headers: r.headers, url: r.url }),
  url: (r) => r.url,
  readBody: (r) => Promise.resolve(r.body),
  complete: () => true,
  nodeRequest: () => undefined,
  fetchRequest: (r) => new Request(new URL(r.url, 'http://localhost'), { method: 'POST', headers: r.headers }),
};
