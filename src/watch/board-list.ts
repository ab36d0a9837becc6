import type { BoardList } from './watch-options';
import { within } from './within';

/** The most boards one watcher takes: the rest of a longer list is left out, and the log says so. */
export const MAX_BOARDS = 100_000;
/** How long the list function may take before its answer is given up for this time. */
export const LIST_TIMEOUT_MS = 30_000;
const MAX_ID_CHARS = 200;

/** The ids read from a board list: valid ones once each, in order, and what was left out. */
export interface BoardIds {
  readonly ids: readonly string[];
  /** Entries that are not board ids (not a string, empty, spaces around, too long, control characters). */
  readonly skipped: number;
  /** More than MAX_BOARDS ids were listed. */
  readonly truncated: boolean;
}

/** Whether a value can be a board id in a route (the client refuses the rest). */
export function isBoardId(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value !== '' &&
    value.length <= MAX_ID_CHARS &&
    value.trim() === value &&
    value !== '.' &&
    value !== '..' &&
    // oxlint-disable-next-line no-control-regex -- control characters are what it finds in text bound for a terminal
    !/[\u0000-\u001f\u007f]/.test(value)
  );
}

/**
 * Reads the boards to watch: the array, or the function's answer (an iterable of ids, or a promise
 * of one), within LIST_TIMEOUT_MS. Rejects when the function throws, times out or answers something
 * that is not a list; the caller keeps the list it had.
 */
export async function listBoards(list: BoardList): Promise<BoardIds> {
  const answer = typeof list === 'function' ? await within(LIST_TIMEOUT_MS, 'the board list function', list) : list;
  if (answer === null || typeof answer !== 'object' || typeof (answer as Iterable<unknown>)[Symbol.iterator] !== 'function') {
    throw new TypeError('the board list function must answer an array (or another iterable) of board ids');
  }
  const ids = new Set<string>();
  let skipped = 0;
  let truncated = false;
  for (const id of answer as Iterable<unknown>) {
    if (!isBoardId(id)) {
      skipped++;
    } else if (!ids.has(id)) {
      if (ids.size === MAX_BOARDS) {
        truncated = true;
        break;
      }
      ids.add(id);
    }
  }
  return { ids: [...ids], skipped, truncated };
}
