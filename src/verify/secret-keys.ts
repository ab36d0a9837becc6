import { mac, type MacKey } from './mac';

/** The length bounds the sender enforces on webhook secrets. */
export const SECRET_MIN_LENGTH = 16;
export const SECRET_MAX_LENGTH = 256;

const encoder = new TextEncoder();

/**
 * Turns the `secret` option into HMAC keys once, at setup. Several secrets are accepted so that a
 * rotated secret keeps working while the sender switches over. Messages never quote the secret.
 */
export function secretKeys(secret: unknown): MacKey[] {
  const list = Array.isArray(secret) ? secret : [secret];
  if (list.length === 0) throw new TypeError('svc-webhooks: `secret` must be a string or a non-empty array of strings');
  const checked = list.map((s, i) => {
    const where = Array.isArray(secret) ? `secret[${i}]` : 'secret';
    if (typeof s !== 'string') throw new TypeError(`svc-webhooks: ${where} must be a string`);
    if (s.length < SECRET_MIN_LENGTH || s.length > SECRET_MAX_LENGTH) {
      throw new RangeError(
        `svc-webhooks: ${where} must be ${SECRET_MIN_LENGTH} to ${SECRET_MAX_LENGTH} characters long, as the webhook secret registered with svc (got ${s.length})`,
      );
    }
    return s;
  });
  const hmac = mac();
  return checked.map((s) => hmac.key(encoder.encode(s)));
}
