import type { Verified } from '../internal/delivery';
import { NO_SECRETS } from '../internal/log-redaction';
import { pathId, type PathPattern } from '../internal/path-pattern';
import type { RequestFacts } from '../internal/request-access';
import { isThenable } from '../internal/thenable';
import { noteClaimedBoard } from '../observe/refusal-log';
import { checkClaimedBoardId, claimedBoard, scannedBoardId } from './claimed-board';
import type { MacKey } from './mac';
import type { SecretLookup } from './secret-resolver';
import type { SecretSource } from './secret-source';
import type { Verifier } from './verifier';
import { readBoardSignature, settled, verifyBoardSignature, type BoardSignature } from './verify-signature';

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
