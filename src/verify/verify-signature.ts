import { timingSafeEqual, type KeyObject } from 'node:crypto';
import { SvcWebhookError } from '../errors';
import { headerValues, singleHeader, type HeaderSource } from '../internal/headers';
import { hmacSha256 } from './secret-keys';

const SIGNATURE_HEADER = 'x-svc-signature';
const TIMESTAMP_HEADER = 'x-svc-timestamp';
const BOT_SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
const BOARD_SIGNATURE = /^v1=([0-9a-fA-F]{64})$/;
// Plain decimal seconds; 15 digits bound the number far beyond any real clock and below 2^53.
const TIMESTAMP = /^[0-9]{1,15}$/;

/** The MAC a request claims, read strictly from its one signature header. */
export function claimedSignature(headers: HeaderSource, pattern: RegExp): Buffer {
  const values = headerValues(headers, SIGNATURE_HEADER);
  if (values.length === 0) throw new SvcWebhookError('signature_missing', 'X-Svc-Signature header is missing');
  if (values.length > 1) throw new SvcWebhookError('signature_duplicated', 'X-Svc-Signature header was sent more than once');
  const match = pattern.exec(values[0]!);
  if (!match) throw new SvcWebhookError('signature_malformed', 'X-Svc-Signature header is malformed');
  return Buffer.from(match[1]!, 'hex');
}

/** True when one of the keys signs the parts to exactly `claimed`; constant time per key. */
export function signedByAnyKey(keys: readonly KeyObject[], claimed: Buffer, parts: Array<string | Buffer>): boolean {
  let ok = false;
  // Every key is tried, so the time taken does not tell which key matched.
  for (const key of keys) ok = timingSafeEqual(hmacSha256(key, ...parts), claimed) || ok;
  return ok;
}

function mismatch(): SvcWebhookError {
  return new SvcWebhookError('signature_mismatch', 'X-Svc-Signature does not match the body and the webhook secret');
}

/** Headers of a bot delivery: `X-Svc-Signature: sha256=<hex>`. Checked before the body is read. */
export function readBotSignature(headers: HeaderSource): Buffer {
  return claimedSignature(headers, BOT_SIGNATURE);
}

/** The MAC of a bot delivery is over the raw body bytes. */
export function verifyBotSignature(keys: readonly KeyObject[], claimed: Buffer, body: Buffer): void {
  if (!signedByAnyKey(keys, claimed, [body])) throw mismatch();
}

export interface BoardSignature {
  claimed: Buffer;
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

/** The MAC of a board delivery is over `timestamp + "." + body`. */
export function verifyBoardSignature(keys: readonly KeyObject[], signature: BoardSignature, body: Buffer): void {
  if (!signedByAnyKey(keys, signature.claimed, [signature.timestampText, '.', body])) throw mismatch();
}

export { singleHeader };
