import { SvcWebhookError } from '../errors';
import type { BoardWebhookEvent } from '../generated/board-types';
import type { BoardDelivery } from '../internal/delivery/delivery';
import { canonicalDeliveryId, checkHeaderMatches, isObject, malformed, type DeliveryFacts } from './delivery-checks';

const DELIVERY_HEADER = { name: 'x-svc-delivery', shown: 'X-Svc-Delivery', code: 'delivery_id_mismatch' } as const;
const EVENT_HEADER = { name: 'x-svc-event', shown: 'X-Svc-Event', code: 'event_type_mismatch' } as const;

/**
 * The checks of a board delivery that hold whatever the schema policy, and the delivery they
 * describe: its id, type and sequence, the headers that repeat the body, and the board it is for.
 */
export function boardDelivery(payload: unknown, { request, verified }: DeliveryFacts): BoardDelivery {
  if (!isObject(payload) || typeof payload.id !== 'string' || payload.id === '' || typeof payload.type !== 'string') {
    throw malformed('a board event must be an object with string `id` and `type`');
  }
  const boardId = verifiedBoard(payload, verified.by);
  checkBoardReferences(payload, boardId);
  const sequence = sequenceNumber(payload.sequence);
  if (sequence === undefined) throw malformed('`sequence` must be a non-negative integer');
  // Handlers get the number, as the event type says; the body is verified, so this changes no check.
  if (payload.sequence !== sequence) payload.sequence = sequence;
  const id = canonicalDeliveryId(payload.id);
  checkHeaderMatches(request, DELIVERY_HEADER, id, canonicalDeliveryId);
  checkHeaderMatches(request, EVENT_HEADER, payload.type);
  return {
    id,
    kind: payload.type,
    payload,
    event: payload as unknown as BoardWebhookEvent,
    timestamp: verified.timestamp ?? 0,
    sequence,
    verifiedBy: verified.by,
    boardId,
  };
}

/**
 * The board the event is for. With a resolver, the event must name the board whose secret verified
 * it (or, with the board in the path, none); with one secret, the signed `board.id`.
 */
function verifiedBoard(payload: Record<string, unknown>, by: string | undefined): string {
  const named = isObject(payload.board) ? payload.board.id : undefined;
  if (by === undefined) return typeof named === 'string' ? named : '';
  if (named !== undefined && named !== by) throw new SvcWebhookError('board_id_mismatch', 'the event names another board than the one it was verified for');
  return by;
}

/**
 * Where svc's contract makes a nested reference equal to the event's board, they must agree: the
 * task's `board_id` is the board (for `task.moved_out` too: it is sent to the task's source board,
 * and `task.moved_in` to its target), a task's `key` is the board's key, a hyphen and a number, and
 * the task's `workspace_id`, when set, is the event's. One board's admin cannot send, with that
 * board's secret, an event about another board's task.
 */
function checkBoardReferences(payload: Record<string, unknown>, boardId: string): void {
  const task = payload.task;
  if (!isObject(task)) return;
  const board = isObject(payload.board) ? payload.board : undefined;
  if (typeof task.board_id === 'string' && task.board_id !== '' && task.board_id !== boardId) refuse('`task.board_id` names another board than the event');
  if (typeof task.key === 'string' && task.key !== '' && typeof board?.key === 'string' && board.key !== '' && !isKeyOf(task.key, board.key)) {
    // Stryker disable next-line StringLiteral: message text only (test/mutation/EQUIVALENT.core.md)
    refuse("`task.key` is not a key of the event's board");
  }
  if (
    typeof task.workspace_id === 'string' &&
    task.workspace_id !== '' &&
    typeof payload.workspace_id === 'string' &&
    task.workspace_id !== payload.workspace_id
  ) {
    // Stryker disable next-line StringLiteral: message text only (test/mutation/EQUIVALENT.core.md)
    refuse('`task.workspace_id` names another workspace than the event');
  }
}

function isKeyOf(taskKey: string, boardKey: string): boolean {
  return (
    // Stryker disable next-line EqualityOperator,ArithmeticOperator: the digits test below needs the same length (test/mutation/EQUIVALENT.core.md)
    taskKey.length > boardKey.length + 1 &&
    taskKey.startsWith(boardKey) &&
    taskKey[boardKey.length] === '-' &&
    /^[0-9]+$/.test(taskKey.slice(boardKey.length + 1))
  );
}

function refuse(message: string): never {
  throw new SvcWebhookError('board_reference_mismatch', message);
}

/** `sequence` is a number; a decimal string is accepted too (the spec's limits carry uint64 values as strings). */
export function sequenceNumber(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^[0-9]{1,15}$/.test(value) ? Number(value) : value;
  return Number.isSafeInteger(n) && (n as number) >= 0 ? (n as number) : undefined;
}
