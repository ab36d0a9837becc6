import type { HeaderSource } from '../internal/headers';
import { parseJson } from '../parse/parse-json';
import { checkSchema, type SchemaPolicy, type SchemaWarning } from '../validate/validate-payload';
import type { Delivery, Protocol } from './protocol';

/**
 * The stages between the raw body and a delivery: the MAC over the exact bytes, the JSON, the
 * schema, and the checks routing and replay protection need. The receivers run them after reading
 * the body; the standalone verifiers run them on the bytes they are given.
 */
export function authenticDelivery<S, D extends Delivery>(
  protocol: Protocol<S, D>,
  signature: S,
  body: Buffer,
  headers: HeaderSource,
  nowMs: number,
  schemaPolicy: SchemaPolicy,
  warn?: SchemaWarning,
): D {
  protocol.verify(signature, body);
  const payload = parseJson(body);
  checkSchema(protocol.schema, payload, schemaPolicy, warn);
  return protocol.delivery(payload, headers, signature, nowMs);
}
