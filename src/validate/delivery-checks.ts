import { SvcWebhookError, type ErrorCode } from '../errors';
import type { Verified } from '../internal/delivery';
import { headerValues, type HeaderSource } from '../internal/headers';
import { isObject, isUuid } from '../internal/value-checks';

/** What the checks after parsing read besides the payload. */
export interface DeliveryFacts {
  /** The request's headers (in an inbox worker, the ones its job kept). */
  readonly request: HeaderSource;
  /** What verifying the signature established. */
  readonly verified: Verified;
  /** Now, in ms since the epoch (in a worker, when the request arrived). */
  readonly nowMs: number;
}

/**
 * The checks that hold whatever the schema policy (routing, replay protection and the tenants'
 * separation depend on them), and the delivery they describe: one per webhook.
 */
export type DeliveryCheck<D> = (payload: unknown, facts: DeliveryFacts) => D;

export { isObject };

export function malformed(message: string): SvcWebhookError {
  return new SvcWebhookError('schema_violation', message, { details: [] });
}

/**
 * A header the sender repeats from the signed body must agree with it (when it is sent at all),
 * compared in the form `canonical` gives both.
 */
export function checkHeaderMatches(
  headers: HeaderSource,
  header: { name: string; shown: string; code: ErrorCode },
  bodyValue: string,
  canonical = (v: string) => v,
): void {
  const values = headerValues(headers, header.name);
  if (values.length === 0) return;
  if (values.length > 1 || canonical(values[0]!) !== bodyValue) throw new SvcWebhookError(header.code, `${header.shown} does not match the body`);
}

/**
 * The one form of a delivery id that the claim, the commit, the release, the store's keys, the log
 * lines and `ctx.deliveryId` use: a UUID (what svc sends) in lower case, any other id as sent.
 * A UUID spelled in upper case once and lower case once is one delivery, not two.
 */
export function canonicalDeliveryId(id: string): string {
  return isUuid(id) ? id.toLowerCase() : id;
}
