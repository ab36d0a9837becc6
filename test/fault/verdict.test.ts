import type { EffectLine, Mark } from './effect-log';
import type { Answer } from './sender';
import type { KeyState } from './store-kind';
import { judge, type Evidence, type ReceiverRecord } from './verdict';

/**
 * The fault test's judge, on hand-made records: each promise it checks is shown failing, so a
 * passing fault run means the promise held, not that the check was blind.
 */
const A = 'a0000000-0000-4000-8000-000000000001';
const B = 'b0000000-0000-4000-8000-000000000002';

function lines(...marks: Array<[Mark, string, number]>): EffectLine[] {
  return marks.map(([mark, id, at]) => ({ mark, id, at }));
}

function ok(id: string, pid: number, at: number, duplicate = false): Answer {
  return { id, slot: 0, pid, status: 200, duplicate, code: undefined, sentAt: at - 5, answeredAt: at };
}

function evidence(receivers: ReceiverRecord[], answers: Answer[], states: Record<string, KeyState> = { [A]: 'done', [B]: 'done' }): Evidence {
  return { ids: [A, B], givenUp: [], answers, receivers, states: new Map(Object.entries(states)), leaseMs: 5000 };
}

const handledOnce: ReceiverRecord = {
  pid: 1,
  lines: lines(['S', A, 10], ['E', A, 12], ['R', A, 13], ['S', B, 20], ['E', B, 22], ['R', B, 23]),
};

describe('the fault test verdict', () => {
  it('passes deliveries each handled once and answered after their side effect', () => {
    const { figures, violations } = judge(evidence([handledOnce], [ok(A, 1, 14), ok(B, 1, 24), ok(B, 1, 40, true)]));
    expect(violations).toEqual([]);
    expect(figures).toMatchObject({ lost: 0, unhandled2xx: 0, overlaps: 0, commitsLost: 0, runs: 2 });
  });

  it('counts a delivery no handler ran to its side effect as lost', () => {
    const receiver = { pid: 1, lines: lines(['S', A, 10], ['E', A, 12], ['R', A, 13], ['S', B, 20], ['F', B, 21]) };
    const { figures, violations } = judge(evidence([receiver], [ok(A, 1, 14)]));
    expect(figures.lost).toBe(1);
    expect(figures.failedRuns).toBe(1);
    expect(violations).toHaveLength(1);
  });

  it('flags a 2xx answered before any side effect of that delivery', () => {
    const { figures } = judge(evidence([handledOnce], [ok(A, 1, 10.5), ok(B, 1, 24)]));
    expect(figures.unhandled2xx).toBe(1);
  });

  it('flags two runs of one delivery that overlap in time, in two processes', () => {
    const other: ReceiverRecord = { pid: 2, lines: lines(['S', A, 11], ['E', A, 14], ['R', A, 15]) };
    const { figures, violations } = judge(evidence([handledOnce, other], [ok(A, 1, 14), ok(B, 1, 24)]));
    expect(figures.overlaps).toBe(1);
    expect(figures.extraRuns.unexplained).toBe(1);
    expect(violations.length).toBeGreaterThanOrEqual(2);
  });

  it('explains a second run after a kill -9 between side effect and answer, and ends the cut run at the kill', () => {
    const killed: ReceiverRecord = { pid: 1, lines: lines(['S', A, 10], ['E', A, 12], ['S', B, 20], ['E', B, 22], ['R', B, 23]), killedAt: 12.5 };
    const retry: ReceiverRecord = { pid: 2, lines: lines(['S', A, 5000], ['E', A, 5002], ['R', A, 5003]) };
    const { figures, violations } = judge(evidence([killed, retry], [ok(B, 1, 24), ok(A, 2, 5004)]));
    expect(violations).toEqual([]);
    expect(figures.extraRuns).toEqual({ rolledBack: 0, killedBeforeAnswer: 1, killedWhileCommitting: 0, unexplained: 0 });
    expect(figures).toMatchObject({ kills: 1, cutAfterEffect: 1, cutBeforeEffect: 0 });
  });

  it('tells apart a kill after the 2xx, while the commit still waited on the store', () => {
    const killed: ReceiverRecord = { pid: 1, lines: lines(['S', A, 10], ['E', A, 12], ['R', A, 13], ['S', B, 20], ['E', B, 22], ['R', B, 23]), killedAt: 600 };
    const repeat: ReceiverRecord = { pid: 2, lines: lines(['S', A, 9000], ['E', A, 9002], ['R', A, 9003]) };
    const { figures, violations } = judge(evidence([killed, repeat], [ok(A, 1, 514), ok(B, 1, 24), ok(A, 2, 9004)]));
    expect(violations).toEqual([]);
    expect(figures.extraRuns.killedWhileCommitting).toBe(1);
  });

  it('does not explain a second run by a kill that came after it started', () => {
    const killedLate: ReceiverRecord = {
      pid: 1,
      lines: lines(['S', A, 10], ['E', A, 12], ['R', A, 13], ['S', B, 20], ['E', B, 22], ['R', B, 23]),
      killedAt: 8000,
    };
    const again: ReceiverRecord = { pid: 2, lines: lines(['S', A, 5000], ['E', A, 5002], ['R', A, 5003]) };
    const { figures } = judge(evidence([killedLate, again], [ok(A, 1, 14), ok(B, 1, 24), ok(A, 2, 5004)]));
    expect(figures.extraRuns.unexplained).toBe(1);
  });

  it('counts a 2xx whose id is not done in the store as a lost commit, unless its receiver was killed -9', () => {
    const lost = judge(evidence([handledOnce], [ok(A, 1, 14), ok(B, 1, 24)], { [A]: 'claimed', [B]: 'done' }));
    expect([lost.figures.commitsLost, lost.figures.commitsCut]).toEqual([1, 0]);
    const cut = judge(evidence([{ ...handledOnce, killedAt: 30 }], [ok(A, 1, 14), ok(B, 1, 24)], { [A]: 'absent', [B]: 'done' }));
    expect([cut.figures.commitsLost, cut.figures.commitsCut]).toEqual([0, 1]);
    expect(cut.violations).toEqual([]);
  });

  it('does not blame a lost commit on a kill that came after the commit had stopped being retried', () => {
    const late = judge(evidence([{ ...handledOnce, killedAt: 6000 }], [ok(A, 1, 14), ok(B, 1, 24)], { [A]: 'absent', [B]: 'done' }));
    expect([late.figures.commitsLost, late.figures.commitsCut]).toEqual([1, 0]);
  });

  it('does not explain a second run by a kill that came more than a lease after the first run', () => {
    const killedLate: ReceiverRecord = { ...handledOnce, killedAt: 7000 };
    const again: ReceiverRecord = { pid: 2, lines: lines(['S', A, 9000], ['E', A, 9002], ['R', A, 9003]) };
    const { figures } = judge(evidence([killedLate, again], [ok(B, 1, 24), ok(A, 2, 9004)]));
    expect(figures.extraRuns.unexplained).toBe(1);
  });

  it('holds a SIGTERMed receiver to finishing its runs, committing what it answered and exiting 0', () => {
    const closed: ReceiverRecord = {
      pid: 1,
      lines: lines(['S', A, 10], ['E', A, 12], ['S', B, 11], ['E', B, 22], ['R', B, 23]),
      terminatedAt: 11.5,
      exitCode: 1,
    };
    const { figures, violations } = judge(evidence([closed], [ok(B, 1, 24)], { [A]: 'absent', [B]: 'claimed' }));
    expect(figures).toMatchObject({ closes: 1, inFlightAtClose: 2, closeLost: 2 });
    expect(violations.join('\n')).toMatch(/exited with 1/);
    expect(violations.join('\n')).toMatch(/never ended/);
  });

  it('with transactional effects, holds every delivery to exactly one committed row: none lost, none doubled', () => {
    const answers = [ok(A, 1, 14), ok(B, 1, 24)];
    const once = judge({
      ...evidence([handledOnce], answers),
      effectRows: new Map([
        [A, 1],
        [B, 1],
      ]),
    });
    expect(once.violations).toEqual([]);
    expect(once.figures.rows).toEqual({ once: 2, lost: 0, doubled: 0 });
    const wrong = judge({
      ...evidence([handledOnce], answers),
      effectRows: new Map([
        [A, 0],
        [B, 2],
      ]),
    });
    expect(wrong.figures.rows).toEqual({ once: 0, lost: 1, doubled: 1 });
    expect(wrong.violations).toHaveLength(2);
    expect(judge(evidence([handledOnce], answers)).figures.rows).toBeUndefined();
  });

  it("explains a second run by the first one's rolled-back transaction, and does not blame a close for it", () => {
    const rolledBack: ReceiverRecord = {
      pid: 1,
      lines: lines(['S', A, 10], ['E', A, 12], ['X', A, 13], ['S', B, 20], ['E', B, 22], ['R', B, 23]),
      terminatedAt: 12.5,
      exitCode: 0,
    };
    const again: ReceiverRecord = { pid: 2, lines: lines(['S', A, 100], ['E', A, 102], ['R', A, 103]) };
    const { figures, violations } = judge(evidence([rolledBack, again], [ok(B, 1, 24), ok(A, 2, 104)], { [A]: 'done', [B]: 'done' }));
    expect(violations).toEqual([]);
    expect(figures.extraRuns).toMatchObject({ rolledBack: 1, unexplained: 0 });
    expect(figures).toMatchObject({ overlaps: 0, closeLost: 0, failedRuns: 1 });
  });
});
