import type { EffectLine, Mark } from './effect-log';
import { judgeFailover, type FailoverEvidence, type WorkerRecord } from './failover-verdict';
import type { Answer } from './sender';

/**
 * The cluster run's judge, on hand-made records: each promise it checks is shown failing, so a
 * passing run means the promise held. The master dies at 1000; the slot surely has no master until
 * 3000; a replica serves it from 3100.
 */
const A = 'a0000000-0000-4000-8000-000000000001';
const B = 'b0000000-0000-4000-8000-000000000002';
const failover = { killedAt: 1000, noMasterUntil: 3000, promotedAt: 3100 };

function lines(...marks: Array<[Mark, string, number]>): EffectLine[] {
  return marks.map(([mark, id, at]) => ({ mark, id, at }));
}

function answer(id: string, status: number, sentAt: number, extra: Partial<Answer> = {}): Answer {
  return { id, slot: 0, pid: 7, status, duplicate: false, code: undefined, sentAt, answeredAt: sentAt + 5, ...extra };
}

const once: WorkerRecord = { pid: 1, lines: lines(['S', A, 100], ['E', A, 110], ['R', A, 112], ['S', B, 4000], ['E', B, 4010], ['R', B, 4011]) };

function evidence(overrides: Partial<FailoverEvidence> = {}): FailoverEvidence {
  return {
    ids: [A, B],
    answers: [answer(A, 200, 50), answer(B, 200, 3900)],
    workers: [once],
    queued: new Set([A, B]),
    states: new Map([
      [A, 'done'],
      [B, 'done'],
    ]),
    failover,
    ...overrides,
  };
}

describe('the cluster run verdict', () => {
  it('passes deliveries each handled once, queued, done in the store, refused with 503 while the slot had no master', () => {
    const refused = [
      answer(B, 503, 1500, { code: 'inbox_unavailable' }),
      answer(B, 409, 1600, { code: 'delivery_in_progress' }),
      answer(A, 200, 2000, { duplicate: true }),
    ];
    const { figures, violations } = judgeFailover(evidence({ answers: [...evidence().answers, ...refused] }));
    expect(violations).toEqual([]);
    expect(figures).toMatchObject({ lost: 0, unqueued2xx: 0, overlaps: 0, doublesInWindow: 0, doublesUnexplained: 0, commitsLost: 0 });
    expect(figures.whileNoMaster).toEqual({ '503 inbox_unavailable': 1, '409 delivery_in_progress': 1, '200 duplicate': 1 });
  });

  it('counts a delivery no worker ran to its side effect as lost', () => {
    const failed: WorkerRecord = { pid: 1, lines: lines(['S', A, 100], ['E', A, 110], ['R', A, 112], ['S', B, 4000], ['F', B, 4010]) };
    const { figures, violations } = judgeFailover(evidence({ workers: [failed] }));
    expect(figures).toMatchObject({ lost: 1, failedRuns: 1 });
    expect(violations).toHaveLength(1);
  });

  it('flags a 2xx for a delivery whose job the queue does not hold', () => {
    const { figures, violations } = judgeFailover(evidence({ queued: new Set([A]) }));
    expect(figures.unqueued2xx).toBe(1);
    expect(violations).toHaveLength(1);
  });

  it.each([
    ['a 200 that is no duplicate', answer(B, 200, 1500)],
    ['no answer', answer(B, 0, 1500)],
    ['a 500', answer(B, 500, 1500, { code: 'internal_error' })],
  ])('flags %s to a request sent after the kill and answered while the slot had no master', (_what, bad) => {
    const { violations } = judgeFailover(evidence({ answers: [...evidence().answers, bad] }));
    expect(violations).toHaveLength(1);
  });

  it('judges only requests sent after the kill and answered before the slot had a master again', () => {
    const outside = [answer(B, 200, 990), answer(B, 200, 2999, { answeredAt: 3050 })];
    expect(judgeFailover(evidence({ answers: [...evidence().answers, ...outside] })).violations).toEqual([]);
  });

  it('flags two runs of one delivery at once, in two workers', () => {
    const other: WorkerRecord = { pid: 2, lines: lines(['S', A, 105], ['E', A, 120], ['R', A, 121]) };
    const { figures, violations } = judgeFailover(evidence({ workers: [once, other] }));
    expect(figures.overlaps).toBe(1);
    expect(violations.length).toBeGreaterThanOrEqual(1);
  });

  it("explains a second run whose first ended in the crash window: from just before the kill until its worker's first job from the new master", () => {
    const first: WorkerRecord = { pid: 1, lines: lines(['S', A, 900], ['E', A, 910], ['R', A, 2000], ['S', B, 3500], ['E', B, 3510], ['R', B, 3511]) };
    const again: WorkerRecord = { pid: 2, lines: lines(['S', A, 12_000], ['E', A, 12_010], ['R', A, 12_011]) };
    const { figures, violations } = judgeFailover(evidence({ workers: [first, again] }));
    expect(violations).toEqual([]);
    expect(figures).toMatchObject({ doublesInWindow: 1, doublesUnexplained: 0 });
  });

  it('does not explain a second run whose first ended well before the kill, or after its worker was back', () => {
    for (const end of [700, 3600]) {
      const first: WorkerRecord = {
        pid: 1,
        lines: lines(['S', A, end - 20], ['E', A, end - 10], ['R', A, end], ['S', B, 3500], ['E', B, 3510], ['R', B, 3511]),
      };
      const again: WorkerRecord = { pid: 2, lines: lines(['S', A, 12_000], ['E', A, 12_010], ['R', A, 12_011]) };
      const { figures } = judgeFailover(evidence({ workers: [first, again] }));
      expect(figures.doublesUnexplained).toBe(1);
    }
  });

  it('does not count a run that failed before its side effect as a second run', () => {
    const failedFirst: WorkerRecord = {
      pid: 1,
      lines: lines(['S', A, 100], ['F', A, 105], ['S', A, 300], ['E', A, 310], ['R', A, 311], ['S', B, 4000], ['E', B, 4010], ['R', B, 4011]),
    };
    expect(judgeFailover(evidence({ workers: [failedFirst] })).figures).toMatchObject({ doublesUnexplained: 0, doublesInWindow: 0, failedRuns: 1 });
  });

  it('flags a delivery answered 2xx that the store does not hold as done, and a worker that did not exit 0', () => {
    const { figures, violations } = judgeFailover(evidence({ states: new Map([[A, 'done']]), workers: [{ ...once, exitCode: 1 }] }));
    expect(figures.commitsLost).toBe(1);
    expect(violations).toHaveLength(2);
  });

  it('flags a run that never ended', () => {
    const open: WorkerRecord = { pid: 1, lines: [...once.lines, ...lines(['S', A, 5000])] };
    expect(judgeFailover(evidence({ workers: [open] })).violations).toHaveLength(1);
  });
});
