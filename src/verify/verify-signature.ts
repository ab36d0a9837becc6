import { SvcWebhookError } from '../errors';
import type { Verified } from '../internal/delivery/delivery';
import { headerValues, type HeaderSource } from '../internal/request/headers';
import { noteClaimedBoard } from '../internal/logging/claimed-board-note';
import { NO_SECRETS } from '../internal/logging/log-redaction';
import { pathId, type PathPattern } from '../internal/request/path-pattern';
import type { RequestFacts } from '../internal/request/request-access';
import { isSvcResourceId, isThenable } from '../internal/checks/value-checks';
import { checkClaimedBoardId, claimedBoard, scannedBoardId } from './claimed-board';
import { mac, type MacKey, type SignedPart } from './mac';
import type { SecretLookup } from './secret-resolver';
import type { SecretSource } from './secret-source';

/**
 * The signature check of each webhook, the verify step of the pipeline: the headers are read and
 * checked before the body is (`readSignature`), then the MAC over the raw body with the secrets of
 * the board or bot the request claims (`verify`). The HMAC itself is `mac.ts`.
 */

/** How one webhook (bot or board) checks the signature of a delivery. */
export interface Verifier<S> {
  /** Reads and checks the signature headers, before the body is read. */
  readSignature(request: RequestFacts, nowMs: number): S;
  /**
   * Checks the MAC over the raw body, with the secrets of the board or bot the request claims, and
   * says who verified it. Synchronous with a fixed secret or a cached lookup on node:crypto; a
   * promise while a resolver is asked, and always where the runtime's HMAC is async (WebCrypto).
   */
  verify(signature: S, body: Uint8Array, request: RequestFacts): Verified | Promise<Verified>;
  /**
   * With a secret resolver: the secrets of the board (bot) that verified a delivery, dropped from
   * every line logged about it. Taken once the delivery is, before its handlers run: one may forget
   * or rotate them.
   */
  secretsOf(verifiedBy: string | undefined): readonly string[];
}

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
  for (let i = 0; i < bytes.length; i++) bytes[i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
  return bytes;
}

/** A hex digit's value from its code: '0'-'9' are 0x30-0x39, 'A'-'F' 0x41-0x46 and 'a'-'f' 0x61-0x66. */
function nibble(code: number): number {
  return (code & 0xf) + 9 * (code >> 6);
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
  return requireSigned(signedByAnyKey(keys, signature.claimed, [`${signature.timestampText}.`, body]));
}

/** What a board delivery's signature checks need: the secrets, the path (it may name the board) and the tolerance. */
export interface BoardVerifierParts {
  readonly secrets: SecretSource;
  readonly pattern: PathPattern;
  readonly toleranceSeconds: number;
}

/** The board webhook's signature: `v1=` HMAC over `timestamp + "." + body`, within the tolerance. */
export function boardVerifier({ secrets, pattern, toleranceSeconds }: BoardVerifierParts): Verifier<BoardSignature> {
  const { keys, lookup } = secrets;
  return {
    readSignature: (request, nowMs) => readBoardSignature(request, toleranceSeconds, nowMs),
    verify(signature, body, request) {
      if (keys !== undefined) return verifyFixed(keys, signature, body, request);
      // The board the request claimed is noted for the refusal's log line, only when it is refused.
      let claimed: string | undefined;
      const noted = (err: unknown): never => {
        noteClaimedBoard(request, claimed);
        throw err;
      };
      try {
        claimed = claimedBoard(body, pathId(pattern, request)).boardId;
        checkClaimedBoardId(claimed);
        const verifying = verifyClaimed(lookup, claimed, signature, body);
        return isThenable<Verified>(verifying) ? Promise.resolve(verifying).catch(noted) : verifying;
      } catch (err) {
        return noted(err);
      }
    },
    secretsOf: (verifiedBy) => (lookup === undefined || verifiedBy === undefined ? NO_SECRETS : lookup.secretsOf(verifiedBy)),
  };
}

/**
 * Verifies with the secrets of the claimed board only: a secret of board B never verifies a delivery
 * for A. Synchronous when the board's secrets are cached.
 */
function verifyClaimed(lookup: SecretLookup, boardId: string, signature: BoardSignature, body: Uint8Array): Verified | Promise<Verified> {
  const verified: Verified = { by: boardId, timestamp: signature.timestamp };
  const found = lookup.keysFor(boardId);
  if (isThenable<readonly MacKey[]>(found)) return Promise.resolve(found).then((k) => settled(verifyBoardSignature(k, signature, body), verified));
  return settled(verifyBoardSignature(found, signature, body), verified);
}

/** With one secret for all: on a mismatch, the board the body claims is noted for the refusal's log line. */
function verifyFixed(keys: readonly MacKey[], signature: BoardSignature, body: Uint8Array, request: RequestFacts): Verified | Promise<Verified> {
  const noted = (err: unknown): never => {
    noteClaimedBoard(request, scannedBoardId(body));
    throw err;
  };
  const verified: Verified = { by: undefined, timestamp: signature.timestamp };
  try {
    const verifying = settled(verifyBoardSignature(keys, signature, body), verified);
    // A promise where the runtime's HMAC is async (WebCrypto).
    return isThenable<Verified>(verifying) ? Promise.resolve(verifying).catch(noted) : verifying;
  } catch (err) {
    return noted(err);
  }
}

const FIXED: Verified = Object.freeze({ by: undefined });

/** The bot webhook's signature: `sha256=` HMAC over the raw body. */
export function botVerifier(secrets: SecretSource, pattern: PathPattern): Verifier<Uint8Array> {
  const { keys, lookup } = secrets;
  return {
    readSignature: (request) => readBotSignature(request),
    verify(claimed, body, request) {
      if (keys !== undefined) return settled(verifyBotSignature(keys, claimed, body), FIXED);
      // A bot update names no bot to trust before it is verified: the path says which bot's secret to use.
      const botId = pathId(pattern, request);
      // Stryker disable next-line ConditionalExpression: no id is no svc user id either: unknown_bot all the same (test/mutation/EQUIVALENT.core.md)
      if (botId === undefined) throw new SvcWebhookError('unknown_bot', 'the request path names no bot');
      // The resolver is asked only about what can be a bot user's id (a lowercase UUID).
      if (!isSvcResourceId(botId))
        throw new SvcWebhookError('unknown_bot', 'the bot this path names is no svc user id (a lowercase UUID), so no secret is known for it');
      const verified: Verified = { by: botId };
      const found = lookup.keysFor(botId);
      if (isThenable<readonly MacKey[]>(found)) return Promise.resolve(found).then((k) => settled(verifyBotSignature(k, claimed, body), verified));
      return settled(verifyBotSignature(found, claimed, body), verified);
    },
    secretsOf: (verifiedBy) => (lookup === undefined || verifiedBy === undefined ? NO_SECRETS : lookup.secretsOf(verifiedBy)),
  };
}
