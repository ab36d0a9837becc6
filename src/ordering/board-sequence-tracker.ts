import type { SequenceGap } from '../internal/delivery/delivery';
import { numberOption, readOptions } from '../internal/checks/option-table';
/**
 * Board events arrive out of order and more than once; each carries `sequence`, monotonic per board.
 * This tracker answers the two questions a handler has: is this event's task snapshot older than
 * one already applied (so applying it would go back in time), and which sequence numbers of a board
 * have not arrived yet. It keeps its state in this process: across instances, keep the last applied
 * sequence next to the data it guards (see docs/ordering.md).
 */
export interface SequencedBoardEvent {
  /** A number, or the decimal string some senders use for uint64 values. */
  readonly sequence: number | string;
  readonly board: { readonly id: string };
  readonly task?: { readonly id?: string } | null;
}

export type { SequenceGap };

/** The declaration of every `boardSequenceTracker()` option (docs/options.md is made from it). */
export const SEQUENCE_TRACKER_OPTIONS = {
  maxTasks: numberOption({
    doc: 'Tasks whose last applied sequence is remembered; the least recently applied are forgotten.',
    unit: 'count',
    default: 100_000,
    min: 1,
  }),
  maxGaps: numberOption({
    doc: 'Open gaps kept per board; past it the oldest gap is given up on (a dropped queue never fills it).',
    unit: 'count',
    default: 1_000,
    min: 1,
  }),
};

/** Options of `boardSequenceTracker(options)`. */
export interface SequenceTrackerOptions {
  /** Tasks whose last applied sequence is remembered; the least recently applied are forgotten. Default 100,000. */
  maxTasks?: number;
  /** Open gaps kept per board; past it the oldest gap is given up on (a dropped queue never fills it). Default 1,000. */
  maxGaps?: number;
}

interface BoardState {
  highest: number;
  /** Missing runs, ascending and disjoint, all below `highest`. */
  readonly gaps: Array<{ from: number; to: number }>;
}

/** Tells a stale task snapshot and the gaps in a board's sequence, in one process (direct mode). */
export class BoardSequenceTracker {
  private readonly boards = new Map<string, BoardState>();
  private readonly tasks = new Map<string, number>();
  private readonly maxTasks: number;
  private readonly maxGaps: number;

  constructor(options: SequenceTrackerOptions = {}) {
    const read = readOptions(SEQUENCE_TRACKER_OPTIONS, options, { factory: 'boardSequenceTracker' });
    this.maxTasks = read.maxTasks;
    this.maxGaps = read.maxGaps;
  }

  /** True when a later event of the same task on the same board was already applied. */
  isStale(event: SequencedBoardEvent): boolean {
    const key = taskKey(event);
    if (key === undefined) return false;
    const applied = this.tasks.get(key);
    return applied !== undefined && sequenceOf(event) < applied;
  }

  /**
   * Records that the event's task snapshot is applied. Call it before awaiting the write, so that
   * an older event handled concurrently already sees itself as stale.
   */
  markApplied(event: SequencedBoardEvent): void {
    const key = taskKey(event);
    if (key === undefined) return;
    const sequence = sequenceOf(event);
    const applied = this.tasks.get(key);
    if (applied !== undefined && applied >= sequence) return;
    this.tasks.delete(key); // re-insert to keep Map order as least-recently-applied first
    this.tasks.set(key, sequence);
    if (this.tasks.size > this.maxTasks) this.tasks.delete(this.tasks.keys().next().value!);
  }

  /**
   * Records that the event arrived and returns the board's gaps after it. Ping (sequence 0) is not
   * part of the sequence; the first event seen starts the record, as earlier ones may predate it.
   */
  observe(event: SequencedBoardEvent): readonly SequenceGap[] {
    const sequence = sequenceOf(event);
    const boardId = event.board.id;
    if (!(sequence >= 1)) return this.gaps(boardId);
    const state = this.boards.get(boardId);
    if (state === undefined) {
      this.boards.set(boardId, { highest: sequence, gaps: [] });
      return [];
    }
    if (sequence > state.highest) {
      if (sequence > state.highest + 1) state.gaps.push({ from: state.highest + 1, to: sequence - 1 });
      state.highest = sequence;
    } else {
      fill(state.gaps, sequence);
    }
    // A new gap, or one split in two by a number from its middle: the oldest is given up on.
    if (state.gaps.length > this.maxGaps) state.gaps.shift();
    return this.gaps(boardId);
  }

  /** The runs of sequence numbers not yet seen between the first seen and the highest seen. */
  gaps(boardId: string): readonly SequenceGap[] {
    return (this.boards.get(boardId)?.gaps ?? []).map((g) => ({ from: g.from, to: g.to }));
  }

  /** The highest sequence seen for the board, or undefined. */
  highest(boardId: string): number | undefined {
    return this.boards.get(boardId)?.highest;
  }
}

/** Removes `sequence` from the gap that holds it (binary search: gaps are ascending and disjoint). */
function fill(gaps: Array<{ from: number; to: number }>, sequence: number): void {
  let lo = 0;
  let hi = gaps.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const gap = gaps[mid]!;
    if (sequence < gap.from) hi = mid - 1;
    else if (sequence > gap.to) lo = mid + 1;
    else {
      if (gap.from === gap.to) gaps.splice(mid, 1);
      else if (sequence === gap.from) gap.from++;
      else if (sequence === gap.to) gap.to--;
      else {
        gaps.splice(mid + 1, 0, { from: sequence + 1, to: gap.to });
        gap.to = sequence - 1;
      }
      return;
    }
  }
}

function sequenceOf(event: SequencedBoardEvent): number {
  return typeof event.sequence === 'string' ? Number(event.sequence) : event.sequence;
}

// A task's sequence is per board: after a move, the task's events come from another board.
function taskKey(event: SequencedBoardEvent): string | undefined {
  const taskId = event.task?.id;
  return typeof taskId === 'string' && taskId !== '' ? `${event.board.id}\u0000${taskId}` : undefined;
}

/** A tracker of board sequence numbers: `const tracker = boardSequenceTracker()`. */
export function boardSequenceTracker(options?: SequenceTrackerOptions): BoardSequenceTracker {
  return new BoardSequenceTracker(options);
}
