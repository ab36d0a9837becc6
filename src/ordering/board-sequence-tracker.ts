/**
 * Board events arrive out of order and more than once; each carries `sequence`, monotonic per board.
 * This tracker answers the two questions a handler has: is this event's task snapshot older than
 * one already applied (so applying it would go back in time), and which sequence numbers of a board
 * have not arrived yet. It keeps its state in this process: across instances, keep the last applied
 * sequence next to the data it guards (see the README).
 */
export interface SequencedBoardEvent {
  readonly sequence: number;
  readonly board: { readonly id: string };
  readonly task?: { readonly id?: string } | null;
}

/** A run of missing sequence numbers, both ends included. */
export interface SequenceGap {
  readonly from: number;
  readonly to: number;
}

export interface SequenceTrackerOptions {
  /** Tasks whose last applied sequence is remembered; the least recently applied are forgotten. Default 100,000. */
  maxTasks?: number;
}

interface BoardState {
  /** Every sequence up to here has been seen. */
  contiguous: number;
  /** Seen sequences above `contiguous`, waiting for the gap below them to fill. */
  readonly ahead: Set<number>;
  highest: number;
}

export class BoardSequenceTracker {
  private readonly boards = new Map<string, BoardState>();
  private readonly tasks = new Map<string, number>();
  private readonly maxTasks: number;

  constructor(options: SequenceTrackerOptions = {}) {
    this.maxTasks = options.maxTasks ?? 100_000;
    if (!Number.isSafeInteger(this.maxTasks) || this.maxTasks < 1) throw new RangeError('svc-webhooks: `maxTasks` must be a positive integer');
  }

  /** True when a later event of the same task on the same board was already applied. */
  isStale(event: SequencedBoardEvent): boolean {
    const key = taskKey(event);
    if (key === undefined) return false;
    const applied = this.tasks.get(key);
    return applied !== undefined && event.sequence < applied;
  }

  /** Records that the event's task snapshot was applied. */
  markApplied(event: SequencedBoardEvent): void {
    const key = taskKey(event);
    if (key === undefined) return;
    const applied = this.tasks.get(key);
    if (applied !== undefined && applied >= event.sequence) return;
    this.tasks.delete(key); // re-insert to keep Map order as least-recently-applied first
    this.tasks.set(key, event.sequence);
    if (this.tasks.size > this.maxTasks) this.tasks.delete(this.tasks.keys().next().value!);
  }

  /**
   * Records that the event arrived (ping, with sequence 0, is not part of the sequence) and returns
   * the board's gaps after it.
   */
  observe(event: SequencedBoardEvent): readonly SequenceGap[] {
    if (event.sequence < 1) return this.gaps(event.board.id);
    let state = this.boards.get(event.board.id);
    if (state === undefined) {
      // The first event seen starts the record: earlier ones may predate this receiver.
      state = { contiguous: event.sequence - 1, ahead: new Set(), highest: event.sequence - 1 };
      this.boards.set(event.board.id, state);
    }
    if (event.sequence > state.contiguous) state.ahead.add(event.sequence);
    while (state.ahead.delete(state.contiguous + 1)) state.contiguous++;
    state.highest = Math.max(state.highest, event.sequence);
    return this.gaps(event.board.id);
  }

  /** The runs of sequence numbers not yet seen between the first seen and the highest seen. */
  gaps(boardId: string): readonly SequenceGap[] {
    const state = this.boards.get(boardId);
    if (state === undefined || state.ahead.size === 0) return [];
    const gaps: SequenceGap[] = [];
    let expected = state.contiguous + 1;
    for (const seq of [...state.ahead].sort((a, b) => a - b)) {
      if (seq > expected) gaps.push({ from: expected, to: seq - 1 });
      expected = seq + 1;
    }
    return gaps;
  }

  /** The highest sequence seen for the board, or undefined. */
  highest(boardId: string): number | undefined {
    return this.boards.get(boardId)?.highest;
  }
}

// A task's sequence is per board: after a move, the task's events come from another board.
function taskKey(event: SequencedBoardEvent): string | undefined {
  const taskId = event.task?.id;
  return typeof taskId === 'string' && taskId !== '' ? `${event.board.id}\u0000${taskId}` : undefined;
}

export function boardSequenceTracker(options?: SequenceTrackerOptions): BoardSequenceTracker {
  return new BoardSequenceTracker(options);
}
