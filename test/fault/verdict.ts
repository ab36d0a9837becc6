import type { EffectLine } from './effect-log';
import type { Answer } from './sender';
import { CLOCK_SLACK_MS, reportOverlaps } from './run-overlaps';
import type { KeyState } from './store-kind';

/** One receiver process as the test saw it: its effect file and how it ended. */
export interface ReceiverRecord {
  readonly pid: number;
  readonly lines: readonly EffectLine[];
  /** When the test sent SIGKILL. */
  readonly killedAt?: number;
  /** When the test sent SIGTERM, and the exit code it ended with. */
  readonly terminatedAt?: number;
  readonly exitCode?: number | null;
}

export interface Evidence {
  readonly ids: readonly string[];
  readonly givenUp: readonly string[];
  readonly answers: readonly Answer[];
  readonly receivers: readonly ReceiverRecord[];
  /** The store's state of each id once every receiver has closed. */
  readonly states: ReadonlyMap<string, KeyState>;
  /** The receivers' claim leaseMs: a commit is retried no longer, so only a kill within it can cut one. */
  readonly leaseMs: number;
  /** For a store whose handlers write their effect in its transaction: the effect rows of each id. */
  readonly effectRows?: ReadonlyMap<string, number>;
}

/** Why a delivery's handlers ran to their side effect more than once. */
export const EXTRA_RUN_CAUSES = {
  rolledBack: 'its transaction rolled back after the side effect (nothing of it persisted)',
  killedBeforeAnswer: 'receiver killed -9 after the side effect, before answering',
  killedWhileCommitting: 'receiver killed -9 after answering 2xx, its commit still waiting on the store',
  unexplained: 'unexplained',
} as const;
export type ExtraRunCause = keyof typeof EXTRA_RUN_CAUSES;

export interface Figures {
  readonly deliveries: number;
  readonly givenUp: number;
  /** Deliveries whose handlers never reached their side effect. */
  readonly lost: number;
  readonly unhandled2xx: number;
  readonly overlaps: number;
  readonly runs: number;
  readonly failedRuns: number;
  readonly extraRuns: Readonly<Record<ExtraRunCause, number>>;
  /** SIGKILLed receivers, and the runs they had in flight (before / after the side effect). */
  readonly kills: number;
  readonly cutBeforeEffect: number;
  readonly cutAfterEffect: number;
  /** SIGTERMed receivers, the runs they had in flight then, and what their close lost. */
  readonly closes: number;
  readonly inFlightAtClose: number;
  readonly closeLost: number;
  /** Deliveries answered 2xx whose id is not `done` in the store: by a kill -9 of the committer, or else. */
  readonly commitsCut: number;
  readonly commitsLost: number;
  readonly statuses: Readonly<Record<string, number>>;
  /** With transactional effects: deliveries with no committed effect row, and with more than one. */
  readonly rows?: { readonly once: number; readonly lost: number; readonly doubled: number };
}

export interface Verdict {
  readonly figures: Figures;
  readonly violations: readonly string[];
}

interface Run {
  readonly pid: number;
  readonly id: string;
  readonly start: number;
  effectAt?: number;
  failedAt?: number;
  /** It failed after its side effect, which its transaction rolled back. */
  rolledBack?: boolean;
  returnedAt?: number;
  /** When it stopped running: returned, failed, or its process was killed. */
  end: number;
  cut: boolean;
}

function runsOf(receiver: ReceiverRecord, violations: string[]): Run[] {
  const runs: Run[] = [];
  const open = new Map<string, Run>();
  for (const { mark, id, at } of receiver.lines) {
    if (mark === 'S') {
      if (open.has(id)) violations.push(`two runs of ${id} at once in pid ${receiver.pid}`);
      const run: Run = { pid: receiver.pid, id, start: at, end: Infinity, cut: false };
      open.set(id, run);
      runs.push(run);
      continue;
    }
    const run = open.get(id);
    if (run === undefined) {
      violations.push(`pid ${receiver.pid} recorded ${mark} for ${id} outside a run`);
      continue;
    }
    if (mark === 'E') run.effectAt = at;
    else {
      if (mark === 'F' || mark === 'X') run.failedAt = at;
      else run.returnedAt = at;
      if (mark === 'X') run.rolledBack = true;
      run.end = at;
      open.delete(id);
    }
  }
  for (const run of open.values()) {
    if (receiver.killedAt !== undefined) {
      run.end = receiver.killedAt;
      run.cut = true;
    } else violations.push(`a run of ${run.id} in pid ${receiver.pid} never ended`);
  }
  return runs;
}

function statusClass(answer: Answer): string {
  if (answer.status === 0) return 'no answer';
  if (answer.status === 200) return answer.duplicate ? '200 duplicate' : '200';
  return answer.code === undefined ? String(answer.status) : `${answer.status} ${answer.code}`;
}

/** Checks the promise against what the processes recorded; pure, so it can be tested on its own. */
export function judge(evidence: Evidence): Verdict {
  const violations: string[] = [];
  const byPid = new Map(evidence.receivers.map((r) => [r.pid, r]));
  const runsById = new Map<string, Run[]>();
  for (const receiver of evidence.receivers) {
    for (const run of runsOf(receiver, violations)) {
      const list = runsById.get(run.id) ?? runsById.set(run.id, []).get(run.id)!;
      list.push(run);
    }
  }
  const allRuns = [...runsById.values()].flat();

  const statuses: Record<string, number> = {};
  const answered2xx = new Map<string, Answer[]>();
  for (const answer of evidence.answers) {
    const key = statusClass(answer);
    statuses[key] = (statuses[key] ?? 0) + 1;
    if (answer.status >= 200 && answer.status < 300) (answered2xx.get(answer.id) ?? answered2xx.set(answer.id, []).get(answer.id)!).push(answer);
  }

  let lost = 0;
  for (const id of evidence.ids) {
    if (!(runsById.get(id) ?? []).some((r) => r.effectAt !== undefined)) {
      lost++;
      violations.push(`delivery ${id} was never handled`);
    }
  }

  let unhandled2xx = 0;
  for (const [id, answers] of answered2xx) {
    const firstEffect = Math.min(...(runsById.get(id) ?? []).map((r) => r.effectAt ?? Infinity));
    for (const answer of answers) {
      if (firstEffect > answer.answeredAt + CLOCK_SLACK_MS) {
        unhandled2xx++;
        violations.push(`pid ${answer.pid} answered ${answer.status} for ${id} before any handler had run it`);
      }
    }
  }

  let overlaps = 0;
  const extraRuns: Record<ExtraRunCause, number> = { rolledBack: 0, killedBeforeAnswer: 0, killedWhileCommitting: 0, unexplained: 0 };
  for (const [id, runs] of runsById) {
    overlaps += reportOverlaps(id, runs, violations);
    const effects = runs.filter((r) => r.effectAt !== undefined).sort((a, b) => a.effectAt! - b.effectAt!);
    for (let i = 1; i < effects.length; i++) {
      const before = effects[i - 1]!;
      const killedAt = byPid.get(before.pid)?.killedAt;
      const explained =
        killedAt !== undefined &&
        killedAt + CLOCK_SLACK_MS >= before.effectAt! &&
        killedAt <= before.effectAt! + evidence.leaseMs &&
        killedAt <= effects[i]!.start + CLOCK_SLACK_MS;
      // A rolled-back effect is counted as done for lost and 2xx-unhandled (its COMMIT may have been
      // cut mid-way); the store's effect rows then say exactly what persisted.
      let cause: ExtraRunCause = 'unexplained';
      if (before.rolledBack) cause = 'rolledBack';
      else if (explained) cause = (answered2xx.get(id) ?? []).some((a) => a.pid === before.pid) ? 'killedWhileCommitting' : 'killedBeforeAnswer';
      extraRuns[cause]++;
      if (cause === 'unexplained')
        violations.push(`delivery ${id} ran again in pid ${effects[i]!.pid} though pid ${before.pid} had run it and was not killed between`);
    }
  }

  let commitsCut = 0;
  let commitsLost = 0;
  for (const [id, answers] of answered2xx) {
    if (evidence.states.get(id) === 'done') continue;
    // Answered, then killed while the commit was still being retried: the crash window, not a lost commit.
    const cutBy = (a: Answer) => {
      const killedAt = a.pid === undefined ? undefined : byPid.get(a.pid)?.killedAt;
      return killedAt !== undefined && killedAt + CLOCK_SLACK_MS >= a.sentAt && killedAt <= a.answeredAt + evidence.leaseMs;
    };
    if (answers.some(cutBy)) commitsCut++;
    else {
      commitsLost++;
      violations.push(`delivery ${id} was answered 2xx but is ${evidence.states.get(id) ?? 'absent'} in the store`);
    }
  }

  let closes = 0;
  let inFlightAtClose = 0;
  let closeLost = 0;
  for (const receiver of evidence.receivers) {
    const at = receiver.terminatedAt;
    if (at === undefined) continue;
    closes++;
    if (receiver.exitCode !== 0) violations.push(`pid ${receiver.pid} exited with ${receiver.exitCode} after SIGTERM`);
    // What was running when the signal came must finish, and what succeeded must be committed.
    const inFlight = allRuns.filter((r) => r.pid === receiver.pid && r.start <= at && r.end > at);
    inFlightAtClose += inFlight.length;
    for (const run of inFlight.filter((r) => r.end === Infinity || (r.effectAt !== undefined && !r.rolledBack && evidence.states.get(r.id) !== 'done'))) {
      closeLost++;
      violations.push(`the graceful close of pid ${receiver.pid} lost its run of ${run.id}`);
    }
  }

  const rows = evidence.effectRows === undefined ? undefined : { once: 0, lost: 0, doubled: 0 };
  if (rows !== undefined) {
    for (const id of evidence.ids) {
      const n = evidence.effectRows!.get(id) ?? 0;
      if (n === 1) rows.once++;
      else if (n === 0) {
        rows.lost++;
        violations.push(`delivery ${id} has no committed effect row`);
      } else {
        rows.doubled++;
        violations.push(`delivery ${id} has ${n} committed effect rows`);
      }
    }
  }

  const receivers = evidence.receivers.filter((r) => r.killedAt !== undefined);
  const cut = allRuns.filter((r) => r.cut);
  return {
    figures: {
      deliveries: evidence.ids.length,
      givenUp: evidence.givenUp.length,
      lost,
      unhandled2xx,
      overlaps,
      runs: allRuns.length,
      failedRuns: allRuns.filter((r) => r.failedAt !== undefined).length,
      extraRuns,
      kills: receivers.length,
      cutBeforeEffect: cut.filter((r) => r.effectAt === undefined).length,
      cutAfterEffect: cut.filter((r) => r.effectAt !== undefined).length,
      closes,
      inFlightAtClose,
      closeLost,
      commitsCut,
      commitsLost,
      statuses,
      ...(rows === undefined ? {} : { rows }),
    },
    violations,
  };
}
