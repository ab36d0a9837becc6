import { attempt, commitHandled, releaseClaim, storeUnavailable, type Claim, type StoreFailure } from '../dedup/claim';
import type { Failure, ParkedDelivery, ParkingLot, ParkReason } from '../dedup/parking-lot';
import { SvcWebhookError } from '../errors';
import type { Delivery } from '../internal/delivery';
import { headerText } from '../internal/headers';
import { textScrubber } from '../internal/log-redaction';
import type { RequestFacts } from '../internal/request-access';
import { safeError } from '../internal/safe-error';
import { isThenable } from '../internal/value-checks';
import type { Settings } from './settings';

/**
 * Parking: svc retries a failing delivery for a day and then drops it, and disables a webhook that
 * failed all day. The store notes when each delivery first failed; an attempt `parkAfterMs` after
 * that is answered 200 and the delivery kept in the store's parking lot for a replay, instead of
 * being lost with the webhook's whole queue.
 */

/** The parts of a claimed delivery that parking reads. */
export interface Parkable {
  readonly delivery: Delivery;
  readonly body: Uint8Array;
  readonly facts: RequestFacts;
  readonly receivedAt: number;
  readonly webhook: 'board' | 'bot';
  readonly settings: Settings;
  /** With a resolver: the verifying board's (bot's) secrets; the webhook's own are in `settings`. */
  readonly verifierSecrets: readonly string[];
}

/** The lot deliveries are parked in, when parking is on and the store has one. */
export function lotOf(settings: Settings): ParkingLot | undefined {
  return settings.parkAfterMs === false ? undefined : settings.store.parking;
}

/** An error's message, as kept beside a failed or parked delivery: scrubbed of the webhook's secrets and of tokens. */
export function failureText(error: unknown, secrets: readonly string[]): string {
  const cause = error instanceof SvcWebhookError && error.code === 'handler_failed' ? error.cause : error;
  return textScrubber(secrets)(safeError(cause).message).slice(0, 2_000);
}

/**
 * Notes a failed attempt (its handlers threw, or outlived their deadline), so that a later one may
 * park it. A store that cannot note it is logged, not fatal: the delivery is retried as before.
 */
export function noteFailure(p: Parkable, error: unknown): void | Promise<void> {
  const lot = lotOf(p.settings);
  if (lot === undefined) return;
  const report = (failed: StoreFailure) => {
    if (failed)
      p.settings.logger.error(
        { err: safeError(failed.error), deliveryId: p.delivery.id },
        'could not note a failed delivery in the parking lot; it will not be parked before svc drops it',
      );
  };
  const noted = attempt(() => lot.noteFailure(p.delivery.id, p.receivedAt, failureText(error, secretsOf(p))));
  return isThenable<StoreFailure>(noted) ? noted.then(report) : report(noted);
}

/** The record of a delivery parked now. */
export function parkedRecord(p: Parkable, reason: ParkReason, failure: Failure | undefined, lastError: string): ParkedDelivery {
  return {
    id: p.delivery.id,
    webhook: p.webhook,
    kind: p.delivery.kind,
    reason,
    parkedAt: p.receivedAt,
    ...(failure === undefined ? {} : { firstFailedAt: failure.firstAt }),
    attempts: failure?.attempts ?? 0,
    lastError,
    headers: parkedHeaders(p.facts),
    body: p.body,
  };
}

/**
 * After the claim: parks the delivery when this attempt comes `parkAfterMs` or more after its
 * first failure, and commits its claim (svc's later attempts are duplicates). Answers whether it
 * parked, synchronously when the lot answers so (the memory store's); a full lot parks nothing
 * (logged), and the handlers run as before. A store that fails throws 503 `store_unavailable`
 * with the claim released, so svc retries and nothing is lost.
 */
export function parkIfDue(p: Parkable, claim: Claim): boolean | Promise<boolean> {
  const lot = lotOf(p.settings)!;
  const failed = (err: unknown) => refuseWith(claim, storeUnavailable(err));
  let found: Failure | undefined | Promise<Failure | undefined>;
  try {
    found = lot.failure(p.delivery.id);
  } catch (err) {
    return failed(err);
  }
  const decide = (failure: Failure | undefined) =>
    failure === undefined || p.receivedAt - failure.firstAt < (p.settings.parkAfterMs as number)
      ? false
      : park(p, lot, parkedRecord(p, 'failing', failure, failure.lastError), claim).catch(failed);
  return isThenable<Failure | undefined>(found) ? Promise.resolve(found).then(decide, failed) : decide(found);
}

/**
 * Parks an authentic delivery that failed the schema (`schemaPolicy: 'park'`) at once: answered 200
 * rather than refused with a 400 that svc would retry for a day. A full lot refuses it as before.
 */
export async function parkSchemaViolation(p: Parkable, claim: Claim, invalid: SvcWebhookError): Promise<void> {
  const kept = await park(p, p.settings.store.parking!, parkedRecord(p, 'schema', undefined, failureText(invalid, secretsOf(p))), claim).catch((err: unknown) =>
    refuseWith(claim, storeUnavailable(err)),
  );
  if (!kept) await refuseWith(claim, invalid);
}

/** Releases the claim, then throws the refusal: svc's retry may claim the delivery again. */
async function refuseWith(claim: Claim, error: SvcWebhookError): Promise<never> {
  await releaseClaim(claim);
  throw error;
}

function secretsOf(p: Parkable): readonly string[] {
  return p.verifierSecrets.length === 0 ? p.settings.fixedSecrets : [...p.settings.fixedSecrets, ...p.verifierSecrets];
}

async function park(p: Parkable, lot: ParkingLot, record: ParkedDelivery, claim: Claim): Promise<boolean> {
  const kept = await lot.park(record);
  const fields = { deliveryId: record.id, kind: record.kind, reason: record.reason, attempts: record.attempts, firstFailedAt: record.firstFailedAt };
  if (!kept) {
    p.settings.logger.error(
      fields,
      'the parking lot is full (maxParked): the delivery is not parked and svc keeps retrying it; replay or drop parked deliveries',
    );
    return false;
  }
  await commitHandled(claim);
  p.settings.logger.error(
    { ...fields, lastError: record.lastError },
    record.reason === 'schema'
      ? 'parked a delivery that fails the schema (schemaPolicy park): replay it with `svc-webhooks parked replay` or webhook.parked.replay()'
      : 'parked a delivery that kept failing, before svc drops it: fix the handler, then replay it with `svc-webhooks parked replay` or webhook.parked.replay()',
  );
  return true;
}

// svc's headers of both webhooks, without the signature: what a replay and a reader need.
const KEPT_HEADERS = ['content-type', 'user-agent', 'x-svc-webhook-version', 'x-svc-event', 'x-svc-delivery', 'x-svc-timestamp'];

/** The headers a parked delivery keeps: svc's own, never the signature. */
export function parkedHeaders(facts: RequestFacts): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = headerText(facts, name);
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}
