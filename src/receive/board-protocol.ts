import type { KeyObject } from 'node:crypto';
import { SvcWebhookError } from '../errors';
import type { BoardWebhookEvent } from '../generated/board-types';
import { HandlerRegistry } from '../route/handler-registry';
import { DeliveryScope } from '../route/delivery-scope';
import type { BoardContext, BoardHandler } from '../route/handler-types';
import type { HandlerCall } from '../route/run-handlers';
import { pathId, type PathPattern } from '../internal/path-pattern';
import { isThenable } from '../internal/thenable';
import type { SecretSource } from '../verify/secret-source';
import { claimedBoard, scannedBoardId } from '../verify/claimed-board';
import { noteClaimedBoard } from '../observe/refusal-log';
import type { SecretLookup } from '../verify/secret-resolver';
import { readBoardSignature, verifyBoardSignature, type BoardSignature } from '../verify/verify-signature';
import { canonicalDeliveryId } from '../validate/delivery-id';
import { NO_SECRETS } from '../internal/log-redaction';
import { checkHeaderMatches, isObject, malformed, type Delivery, type Protocol } from './protocol';
import type { RequestFacts } from '../internal/request-access';

export interface BoardDelivery extends Delivery {
  readonly event: BoardWebhookEvent;
  readonly timestamp: number;
  readonly sequence: number;
  /** With a resolver: the board whose secret verified the delivery. */
  readonly verifiedBoard: string | undefined;
}

export interface BoardHandlers {
  readonly byType: HandlerRegistry<BoardHandler<never>>;
  readonly any: BoardHandler<never>[];
}

/** The board a delivery was verified for, when each board has its own secret. */
type ClaimedSignature = BoardSignature & { boardId?: string };

export function boardProtocol(secrets: SecretSource, pattern: PathPattern, toleranceSeconds: number, handlers: BoardHandlers): Protocol<BoardSignature, BoardDelivery> {
  const { keys, lookup } = secrets;
  return {
    webhook: 'board',
    schema: 'board',
    readSignature: (request, nowMs) => readBoardSignature(request, toleranceSeconds, nowMs),
    verify(signature: ClaimedSignature, body, request) {
      if (keys !== undefined) return verifyFixed(keys, signature, body, request);
      // The board the request claimed is noted for the refusal's log line, only when it is refused.
      const noted = (err: unknown): never => {
        noteClaimedBoard(request, signature.boardId);
        throw err;
      };
      try {
        const verifying = verifyClaimed(lookup, pattern, signature, body, request);
        return verifying === undefined ? undefined : verifying.catch(noted);
      } catch (err) {
        return noted(err);
      }
    },
    delivery(payload, request, signature: ClaimedSignature) {
      if (!isObject(payload) || typeof payload.id !== 'string' || payload.id === '' || typeof payload.type !== 'string') {
        throw malformed('a board event must be an object with string `id` and `type`');
      }
      const verifiedBoard = signature.boardId;
      if (verifiedBoard !== undefined) checkVerifiedBoard(payload, verifiedBoard);
      const sequence = sequenceNumber(payload.sequence);
      if (sequence === undefined) throw malformed('`sequence` must be a non-negative integer');
      // Handlers get the number, as the event type says; the body is verified, so this changes no check.
      if (payload.sequence !== sequence) payload.sequence = sequence;
      const id = canonicalDeliveryId(payload.id);
      checkHeaderMatches(request, 'x-svc-delivery', id, 'delivery_id_mismatch', 'X-Svc-Delivery', canonicalDeliveryId);
      checkHeaderMatches(request, 'x-svc-event', payload.type, 'event_type_mismatch', 'X-Svc-Event');
      return {
        id,
        kind: payload.type,
        payload,
        event: payload as unknown as BoardWebhookEvent,
        timestamp: signature.timestamp,
        sequence,
        verifiedBoard,
      };
    },
    context: (delivery, init) => new BoardDeliveryContext(delivery, init),
    secretsOf(delivery) {
      return lookup === undefined || delivery.verifiedBoard === undefined ? NO_SECRETS : lookup.secretsOf(delivery.verifiedBoard);
    },
    calls(delivery, ctx) {
      const call = (h: BoardHandler<never>): HandlerCall => () => (h as BoardHandler)(delivery.event, ctx as BoardDeliveryContext);
      const own = handlers.byType.get(delivery.kind);
      return own.length === 0 ? handlers.any.map(call) : [...own.map(call), ...handlers.any.map(call)];
    },
  };
}

/**
 * Verifies with the secrets of the claimed board only: a secret of board B never verifies a delivery
 * for A. Synchronous when the board's secrets are cached.
 */
function verifyClaimed(lookup: SecretLookup, pattern: PathPattern, signature: ClaimedSignature, body: Buffer, request: RequestFacts): void | Promise<void> {
  const fromPath = pathId(pattern, request);
  const claim = claimedBoard(body, fromPath);
  signature.boardId = claim.boardId;
  const found = lookup.keysFor(claim.boardId);
  if (isThenable<readonly KeyObject[]>(found)) return Promise.resolve(found).then((k) => verifyBoardSignature(k, signature, body));
  return verifyBoardSignature(found, signature, body);
}

/** With one secret for all: on a mismatch, the board the body claims is noted for the refusal's log line. */
function verifyFixed(keys: readonly KeyObject[], signature: BoardSignature, body: Buffer, request: RequestFacts): void {
  try {
    verifyBoardSignature(keys, signature, body);
  } catch (err) {
    noteClaimedBoard(request, scannedBoardId(body));
    throw err;
  }
}

/** The handled event must name the board whose secret verified it (or, with the board in the path, none). */
function checkVerifiedBoard(payload: Record<string, unknown>, boardId: string): void {
  const id = isObject(payload.board) ? payload.board.id : undefined;
  if (id !== undefined && id !== boardId) throw new SvcWebhookError('board_id_mismatch', 'the event names another board than the one it was verified for');
}

/** `sequence` is a number; a decimal string is accepted too (the spec's limits carry uint64 values as strings). */
export function sequenceNumber(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^[0-9]{1,15}$/.test(value) ? Number(value) : value;
  return Number.isSafeInteger(n) && (n as number) >= 0 ? (n as number) : undefined;
}

class BoardDeliveryContext extends DeliveryScope implements BoardContext {
  readonly webhook = 'board' as const;
  readonly type: string;
  readonly event: BoardWebhookEvent;
  readonly timestamp: number;
  readonly sequence: number;

  constructor(delivery: BoardDelivery, init: ConstructorParameters<typeof DeliveryScope>) {
    super(...init);
    this.type = delivery.kind;
    this.event = delivery.event;
    this.timestamp = delivery.timestamp;
    this.sequence = delivery.sequence;
  }
}
