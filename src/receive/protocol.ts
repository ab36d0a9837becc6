import { SvcWebhookError, type ErrorCode } from '../errors';
import { headerValues, type HeaderSource } from '../internal/headers';
import type { HandlerCall } from '../route/run-handlers';
import type { DeliveryScope } from '../route/delivery-scope';
import type { SchemaName } from '../validate/validate-payload';
import type { RequestFacts } from '../internal/request-access';

export type { Delivery } from '../internal/delivery';
import type { Delivery } from '../internal/delivery';

/** What differs between the bot and the board webhook; the pipeline around it is shared. */
export interface Protocol<S, D extends Delivery> {
  readonly webhook: 'board' | 'bot';
  readonly schema: SchemaName;
  /** Reads and checks the signature headers, before the body is read. */
  readSignature(request: RequestFacts, nowMs: number): S;
  /**
   * Checks the MAC over the raw body, with the secrets of the board or bot the request claims.
   * Synchronous with a fixed secret or a cached lookup; a promise while a resolver is asked.
   */
  verify(signature: S, body: Buffer, request: RequestFacts): void | Promise<void>;
  /**
   * The checks that hold whatever the schema policy (routing and replay protection depend on
   * them), and the delivery they describe.
   */
  delivery(payload: unknown, request: RequestFacts, signature: S, nowMs: number): D;
  /** The handlers' context: `init` plus what this webhook adds. */
  context(delivery: D, init: ConstructorParameters<typeof DeliveryScope>): DeliveryScope;
  /** The handler calls for this delivery, in registration order. */
  calls(delivery: D, ctx: DeliveryScope): HandlerCall[];
  /**
   * With a secret resolver: the secrets of the board (bot) that verified this delivery, dropped from
   * every line logged about it. Taken once the delivery is, before its handlers run: one may forget
   * or rotate them.
   */
  secretsOf(delivery: D): readonly string[];
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function malformed(message: string): SvcWebhookError {
  return new SvcWebhookError('schema_violation', message, { details: [] });
}

/**
 * A header the sender repeats from the signed body must agree with it (when it is sent at all),
 * compared in the form `canonical` gives both.
 */
export function checkHeaderMatches(headers: HeaderSource, name: string, bodyValue: string, code: ErrorCode, what: string, canonical = (v: string) => v): void {
  const values = headerValues(headers, name);
  if (values.length === 0) return;
  if (values.length > 1 || canonical(values[0]!) !== bodyValue) throw new SvcWebhookError(code, `${what} does not match the body`);
}
