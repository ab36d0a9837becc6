import { SvcWebhookError } from '../errors';
import { headerValues, singleHeader, type HeaderSource } from '../internal/headers';
import { mac, type MacKey, type SignedPart } from './mac';

const SIGNATURE_HEADER = 'x-svc-signature';
const TIMESTAMP_HEADER = 'x-svc-timestamp';
const BOT_SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
const BOARD_SIGNATURE = /^v1=([0-9a-fA-F]{64})$/;
// Plain decimal seconds; 15 digits bound the number far beyond any real clock and below 2^53.
const TIMESTAMP = /^[0-9]{1,15}$/;

/** The MAC a request claims, read strictly from its one signature header. */
export function claimedSignature(headers: HeaderSource, pattern: RegExp): Uint8Array {
  const values = headerValues(headers, SIGNATURE_HEADER);
  if (values.length === 0) throw new SvcWebhookError('signature_missing', 'X-Svc-Signature header is missing');
  if (values.length > 1) throw new SvcWebhookError('signature_duplicated', 'X-Svc-Signature header was sent more than once');
  const match = pattern.exec(values[0]!);
  if (!match) throw new SvcWebhookError('signature_malformed', 'X-Svc-Signature header is malformed');
  return hexBytes(match[1]!);
}

/** The bytes of hex text that the header's pattern already checked (an even count of hex digits). */
export function hexBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  // Stryker disable next-line EqualityOperator: a write past the end of a typed array is ignored (test/mutation/EQUIVALENT.core.md)
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/**
 * True when one of the keys signs the parts to exactly `claimed`; constant time per key. Synchronous
 * on node:crypto, a promise on WebCrypto.
 */
export function signedByAnyKey(keys: readonly MacKey[], claimed: Uint8Array, parts: readonly SignedPart[]): boolean | Promise<boolean> {
  return mac().signedByAny(keys, claimed, parts);
}

/** `value` once a check is done: at once after a synchronous check, else when its promise resolves. */
export function settled<T>(check: void | Promise<void>, value: T): T | Promise<T> {
  return check === undefined ? value : check.then(() => value);
}

/** Throws signature_mismatch unless signed; a promise of it when the MAC is computed asynchronously. */
function requireSigned(signed: boolean | Promise<boolean>): void | Promise<void> {
  if (typeof signed !== 'boolean') return signed.then(requireSigned);
  if (!signed) throw mismatch();
}

function mismatch(): SvcWebhookError {
  return new SvcWebhookError('signature_mismatch', 'X-Svc-Signature does not match the body and the webhook secret');
}

/** Headers of a bot delivery: `X-Svc-Signature: sha256=<hex>`. Checked before the body is read. */
export function readBotSignature(headers: HeaderSource): Uint8Array {
  return claimedSignature(headers, BOT_SIGNATURE);
}

/** The MAC of a bot delivery is over the raw body bytes. Synchronous on node:crypto. */
export function verifyBotSignature(keys: readonly MacKey[], claimed: Uint8Array, body: Uint8Array): void | Promise<void> {
  return requireSigned(signedByAnyKey(keys, claimed, [body]));
}

export interface BoardSignature {
  claimed: Uint8Array;
  /** The timestamp header exactly as sent: the signed bytes start with it. */
  timestampText: string;
  /** Seconds since the epoch. */
  timestamp: number;
}

/**
 * Headers of a board delivery: `X-Svc-Signature: v1=<hex>` and `X-Svc-Timestamp`, which must lie
 * within `toleranceSeconds` of `nowMs` either way. Checked before the body is read.
 */
export function readBoardSignature(headers: HeaderSource, toleranceSeconds: number, nowMs: number): BoardSignature {
  const claimed = claimedSignature(headers, BOARD_SIGNATURE);
  const values = headerValues(headers, TIMESTAMP_HEADER);
  if (values.length === 0) throw new SvcWebhookError('timestamp_missing', 'X-Svc-Timestamp header is missing');
  const timestampText = values.length === 1 ? values[0]! : '';
  if (!TIMESTAMP.test(timestampText)) {
    throw new SvcWebhookError('timestamp_malformed', 'X-Svc-Timestamp must be sent once, as Unix time in decimal seconds');
  }
  const timestamp = Number(timestampText);
  if (Math.abs(nowMs / 1000 - timestamp) > toleranceSeconds) {
    throw new SvcWebhookError('timestamp_out_of_tolerance', `X-Svc-Timestamp is more than ${toleranceSeconds} s away from now`);
  }
  return { claimed, timestampText, timestamp };
}

/** The MAC of a board delivery is over `timestamp + "." + body`. Synchronous on node:crypto. */
export function verifyBoardSignature(keys: readonly MacKey[], signature: BoardSignature, body: Uint8Array): void | Promise<void> {
  return requireSigned(signedByAnyKey(keys, signature.claimed, [signature.timestampText, '.', body]));
}

export { singleHeader };
