import { SvcWebhookError, type ErrorCode } from '../errors';
import * as generated from '../generated/validators';
import type { Verified } from '../internal/delivery/delivery';
import { headerValues, type HeaderSource } from '../internal/request/headers';
import { isObject, isUuid } from '../internal/checks/value-checks';

/**
 * What the validate stage's two webhooks share: the schema check under its policy, and the parts of
 * the checks that hold whatever the policy (board-delivery.ts and bot-delivery.ts apply them).
 */

/** What to do with an authentic delivery that does not match the schema. */
export type SchemaPolicy = 'reject' | 'warn' | 'skip' | 'park';
export const schemaPolicies: readonly SchemaPolicy[] = ['reject', 'warn', 'skip', 'park'];

export type SchemaName = 'board' | 'bot';

/** What the problems of an ajv validate function hold (ajv's ErrorObject, the fields read here). */
export interface ValidationError {
  readonly keyword: string;
  readonly instancePath: string;
  readonly message?: string;
}

/** An ajv validate function: true when the data matches; otherwise the problems are in `errors`. */
export interface ValidateFunction {
  (data: unknown): boolean;
  errors?: ValidationError[] | null;
}

/**
 * The schemas of schemas/ compiled at build time (src/generated/validators.ts, made by
 * `npm run generate`): no compiler is loaded and no code is generated when a process starts. Read
 * on first use, so that the published bundle loads them when a webhook is set up (they are a
 * bundle of their own, see scripts/build.mjs), not with the package.
 */
let compiled: Record<SchemaName, ValidateFunction> | undefined;

export function validatorFor(name: SchemaName): ValidateFunction {
  compiled ??= { board: generated.board as ValidateFunction, bot: generated.bot as ValidateFunction };
  return compiled[name];
}

export interface SchemaProblem {
  path: string;
  message: string;
}

function problems(errors: readonly ValidationError[] | null | undefined): SchemaProblem[] {
  return (errors ?? []).slice(0, 5).map((e) => ({ path: e.instancePath || '/', message: e.message ?? e.keyword }));
}

/** Checks a payload against its schema; returns the problems found (empty when it passes). */
export function schemaProblems(validate: ValidateFunction, payload: unknown): SchemaProblem[] {
  return validate(payload) ? [] : problems(validate.errors);
}

export function schemaViolation(found: SchemaProblem[]): SvcWebhookError {
  const first = found[0];
  const where = first ? `: ${first.path} ${first.message}` : '';
  return new SvcWebhookError('schema_violation', `payload does not match the schema${where}`, { details: found });
}

/** Called when a delivery fails the schema under the `warn` policy, before it is handled anyway. */
export type SchemaWarning = (error: SvcWebhookError, found: SchemaProblem[]) => void;

/**
 * The schema policy applied: the schema violation to refuse the delivery with under `reject`;
 * under `warn` the mismatch is reported and undefined returned; `skip` does not validate.
 */
export function schemaRefusal(schema: SchemaName, payload: unknown, policy: SchemaPolicy, warn: SchemaWarning | undefined): SvcWebhookError | undefined {
  if (policy === 'skip') return undefined;
  const found = schemaProblems(validatorFor(schema), payload);
  if (found.length === 0) return undefined;
  const error = schemaViolation(found);
  // Under 'park' the refusal goes back too: the receiver parks the delivery instead of sending it.
  if (policy !== 'warn') return error;
  warn?.(error, found);
  return undefined;
}

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
