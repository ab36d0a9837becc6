import { boardSequenceTracker } from '../../../src';

const board = { id: 'board-1' };
const ev = (sequence: number, taskId = 'task-1', boardId = board.id) => ({ sequence, board: { id: boardId }, task: { id: taskId } });

describe('board sequence tracker', () => {
  it('tells a stale task snapshot from a newer one', () => {
    const tracker = boardSequenceTracker();
    expect(tracker.isStale(ev(5))).toBe(false);
    tracker.markApplied(ev(5));
    expect(tracker.isStale(ev(3))).toBe(true);
    expect(tracker.isStale(ev(7))).toBe(false);
    expect(tracker.isStale(ev(3, 'task-2'))).toBe(false);
    // Sequences are per board: the same task on another board (after a move) is not compared.
    expect(tracker.isStale(ev(1, 'task-1', 'board-2'))).toBe(false);
    tracker.markApplied(ev(4));
    expect(tracker.isStale(ev(4))).toBe(true);
  });

  it('exposes gaps in a board sequence as they open and close out of order', () => {
    const tracker = boardSequenceTracker();
    expect(tracker.observe(ev(10))).toEqual([]);
    expect(tracker.observe(ev(13))).toEqual([{ from: 11, to: 12 }]);
    expect(tracker.observe(ev(16))).toEqual([
      { from: 11, to: 12 },
      { from: 14, to: 15 },
    ]);
    expect(tracker.observe(ev(12))).toEqual([
      { from: 11, to: 11 },
      { from: 14, to: 15 },
    ]);
    tracker.observe(ev(11));
    tracker.observe(ev(14));
    expect(tracker.observe(ev(15))).toEqual([]);
    expect(tracker.highest(board.id)).toBe(16);
  });

  it('ignores ping (sequence 0) and repeated deliveries', () => {
    const tracker = boardSequenceTracker();
    tracker.observe(ev(1));
    expect(tracker.observe({ sequence: 0, board, task: null })).toEqual([]);
    expect(tracker.observe(ev(1))).toEqual([]);
    expect(tracker.highest(board.id)).toBe(1);
  });

  it('forgets the least recently applied tasks beyond maxTasks', () => {
    const tracker = boardSequenceTracker({ maxTasks: 2 });
    tracker.markApplied(ev(5, 'a'));
    tracker.markApplied(ev(6, 'b'));
    tracker.markApplied(ev(7, 'c'));
    expect(tracker.isStale(ev(1, 'a'))).toBe(false);
    expect(tracker.isStale(ev(1, 'b'))).toBe(true);
  });

  it('accepts sequences sent as decimal strings', () => {
    const tracker = boardSequenceTracker();
    tracker.markApplied({ sequence: '9', board, task: { id: 't' } });
    expect(tracker.isStale({ sequence: '10', board, task: { id: 't' } })).toBe(false);
    expect(tracker.isStale({ sequence: 8, board, task: { id: 't' } })).toBe(true);
    tracker.observe({ sequence: '3', board, task: null });
    expect(tracker.observe({ sequence: '6', board, task: null })).toEqual([{ from: 4, to: 5 }]);
  });

  it('keeps at most maxGaps open gaps per board, giving up on the oldest', () => {
    const tracker = boardSequenceTracker({ maxGaps: 3 });
    for (const seq of [1, 3, 5, 7, 9, 11]) tracker.observe(ev(seq));
    expect(tracker.gaps(board.id)).toEqual([
      { from: 6, to: 6 },
      { from: 8, to: 8 },
      { from: 10, to: 10 },
    ]);
  });

  it('keeps at most maxGaps when late numbers split a gap in two, giving up on the oldest', () => {
    const tracker = boardSequenceTracker({ maxGaps: 3 });
    for (const seq of [1, 10, 4, 6, 8]) tracker.observe(ev(seq));
    expect(tracker.gaps(board.id)).toEqual([
      { from: 5, to: 5 },
      { from: 7, to: 7 },
      { from: 9, to: 9 },
    ]);
  });
});
