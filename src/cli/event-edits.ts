import { isSvcResourceId, isUuid } from '../internal/checks/value-checks';
import { usageError } from './cli-error';
import { applySetting, parseSetting, type Setting } from './set-path';

/** What `send --board`, `--set` and `--id` change in an event before it is signed. */
export interface EventEdits {
  readonly board?: string | undefined;
  readonly settings: readonly Setting[];
  readonly id?: string | undefined;
}

/** The flags' values checked: a board id and a delivery id as svc writes them, every `--set` well formed. */
export function eventEdits(values: { board?: string | undefined; set?: readonly string[] | undefined; id?: string | undefined }): EventEdits {
  // A secret resolver is only asked about a lower-case UUID, so any other board id is refused unknown_board.
  if (values.board !== undefined && !isSvcResourceId(values.board)) throw usageError('--board must be a board id: a UUID in lower case, as svc writes them');
  // Receivers treat a UUID in any case as one delivery; svc's ids are UUIDs.
  if (values.id !== undefined && !isUuid(values.id)) throw usageError('--id must be a delivery id: a UUID, as svc sends them');
  return { board: values.board, settings: (values.set ?? []).map(parseSetting), id: values.id };
}

export function hasEdits(edits: EventEdits): boolean {
  return edits.board !== undefined || edits.settings.length > 0 || edits.id !== undefined;
}

/** The board an event is about: a board event's `board.id`; a bot update's first `boardId` (taskCreate, taskActivity ...). */
function boardIdOf(payload: Record<string, unknown>, webhook: 'board' | 'bot'): string | undefined {
  if (webhook === 'board') {
    const board = payload.board as { id?: unknown } | null | undefined;
    return typeof board?.id === 'string' && board.id !== '' ? board.id : undefined;
  }
  return firstBoardId(payload.event);
}

function firstBoardId(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    if (key === 'boardId' && typeof item === 'string' && item !== '') return item;
    const found = firstBoardId(item);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Every string equal to `from`, at any depth, becomes `to`: the board's id wherever the event repeats it. */
function replaceEverywhere(value: unknown, from: string, to: string): unknown {
  if (value === from) return to;
  if (typeof value !== 'object' || value === null) return value;
  const container = value as Record<string, unknown>;
  for (const key of Object.keys(container)) container[key] = replaceEverywhere(container[key], from, to);
  return value;
}

/**
 * Applies the edits in place, in this order: `--board` (every place that carries the event's board
 * id: a board event's `board.id`, `task.board_id` and the side of a `moved_board` change on this
 * board; a bot update's `boardId` fields), then each `--set` in the order given, then `--id`.
 */
export function applyEdits(payload: Record<string, unknown>, webhook: 'board' | 'bot', edits: EventEdits): void {
  if (edits.board !== undefined) {
    const current = boardIdOf(payload, webhook);
    if (current === undefined) throw usageError('--board: this event carries no board id to change');
    replaceEverywhere(payload, current, edits.board);
  }
  for (const setting of edits.settings) applySetting(payload, setting);
  if (edits.id !== undefined) payload.id = edits.id;
}
