import type { EffectLine } from './effect-log';
import type { Answer } from './sender';
import { reportOverlaps } from './run-overlaps';
import type { KeyState } from './store-kind';

/** One worker process of the cluster run: its effect file and how it ended. */
export interface WorkerRecord {
  readonly pid: number;
  readonly lines: readonly EffectLine[];
  readonly exitCode?: number | null;
}

/** The failover of the queue's slot, on the wall clock (ms). */
export interface Failover {
  /** When the master was killed (SIGKILL sent and its end seen). */
  readonly killedAt: number;
  /** Until when the slot surely had no master: the start of the last look that found none. */
  readonly noMasterUntil: number;
  /** When a look first found the replica serving the slot. */
  readonly promotedAt: number;
}

export interface FailoverEvidence {
  readonly ids: readonly string[];
  readonly answers: readonly Answer[];
  readonly workers: readonly WorkerRecord[];
  /** The ids whose job the queue holds at the end of the run. */
  readonly queued: ReadonlySet<string>;
  /** The de-dup store's state of each id at the end of the run. */
  readonly states: ReadonlyMap<string, KeyState>;
  readonly failover: Failover;
}

export interface FailoverFigures {
  readonly deliveries: number;
  readonly lost: number;
  readonly unqueued2xx: number;
  readonly overlaps: number;
  readonly runs: number;
  readonly failedRuns: number;
  /** Second runs of a delivery whose first run ended in the crash window (see CRASH_WINDOW), and the others. */
  readonly doublesInWindow: number;
  readonly doublesUnexplained: number;
  /** Requests sent after the kill and answered before the promotion, and how they were answered. */
  readonly whileNoMaster: Readonly<Record<string, number>>;
  /** Deliveries answered 2xx that the store does not hold as done. */
  readonly commitsLost: number;
  readonly statuses: Readonly<Record<string, number>>;
}

export interface FailoverVerdict {
  readonly figures: FailoverFigures;
  readonly violations: readonly string[];
}

/**
 * The documented crash window of a worker (docs/redis-cluster.md): a delivery whose handlers
 * returned while the worker could not reach the queue's master (from just before that master died,
 * its last writes unreplicated, until the worker took its first job from the new master) cannot be
 * marked processed; its job runs again once its lock lapses.
 */
export const CRASH_WINDOW = { beforeKillMs: 250 } as const;

/**
 * Besides a 503, what a receiver may answer while the queue's slot has no master: a delivery whose
 * claim another attempt holds (409, retried by svc), and a repeat of one queued before (200 duplicate:
 * the store says it is done).
 */
const REFUSED_WITHOUT_MASTER = new Set(['409 delivery_in_progress', '200 duplicate']);

interface Run {
  readonly pid: number;
  readonly start: number;
  effectAt?: number;
  failed?: boolean;
  end: number;
}

function statusClass(answer: Answer): string {
  if (answer.status === 0) return 'no answer';
  if (answer.status === 200) return answer.duplicate ? '200 duplicate' : '200';
  return answer.code === undefined ? String(answer.status) : `${answer.status} ${answer.code}`;
}

function runsOf(worker: WorkerRecord, violations: string[]): Map<string, Run[]> {
  const runs = new Map<string, Run[]>();
  const open = new Map<string, Run>();
  for (const { mark, id, at } of worker.lines) {
    if (mark === 'S') {
      if (open.has(id)) violations.push(`two runs of ${id} at once in worker ${worker.pid}`);
      const run: Run = { pid: worker.pid, start: at, end: Infinity };
      open.set(id, run);
      (runs.get(id) ?? runs.set(id, []).get(id)!).push(run);
    } else if (mark === 'E') {
      const run = open.get(id);
      if (run !== undefined) run.effectAt = at;
    } else {
      const run = open.get(id);
      if (run === undefined) continue;
      run.end = at;
      run.failed = mark === 'F';
      open.delete(id);
    }
  }
  for (const [id] of open) violations.push(`a run of ${id} in worker ${worker.pid} never ended`);
  return runs;
}

/** Checks the cluster run's promise against what the processes recorded; pure, so it can be tested on its own. */
export function judgeFailover(evidence: FailoverEvidence): FailoverVerdict {
  const violations: string[] = [];
  const { killedAt, noMasterUntil, promotedAt } = evidence.failover;
  const byId = new Map<string, Run[]>();
  for (const worker of evidence.workers) {
    if (worker.exitCode !== undefined && worker.exitCode !== 0) violations.push(`worker ${worker.pid} exited with ${worker.exitCode} after SIGTERM`);
    for (const [id, runs] of runsOf(worker, violations)) byId.set(id, [...(byId.get(id) ?? []), ...runs]);
  }
  // A worker is back once it starts a run after the promotion: it took that job from the new master.
  const backAt = new Map(evidence.workers.map((w) => [w.pid, Math.min(...w.lines.filter((l) => l.mark === 'S' && l.at >= promotedAt).map((l) => l.at))]));

  const statuses: Record<string, number> = {};
  const whileNoMaster: Record<string, number> = {};
  const accepted = new Set<string>();
  for (const answer of evidence.answers) {
    const key = statusClass(answer);
    statuses[key] = (statuses[key] ?? 0) + 1;
    if (answer.status >= 200 && answer.status < 300) accepted.add(answer.id);
    if (answer.sentAt >= killedAt && answer.answeredAt <= noMasterUntil) {
      whileNoMaster[key] = (whileNoMaster[key] ?? 0) + 1;
      if (!REFUSED_WITHOUT_MASTER.has(key) && answer.status !== 503)
        violations.push(`while the queue's slot had no master, pid ${answer.pid} answered ${key} for ${answer.id}`);
    }
  }

  let lost = 0;
  for (const id of evidence.ids) {
    if ((byId.get(id) ?? []).some((r) => r.effectAt !== undefined)) continue;
    lost++;
    violations.push(`delivery ${id} was never handled`);
  }

  let unqueued2xx = 0;
  for (const answer of evidence.answers) {
    if (answer.status < 200 || answer.status >= 300 || evidence.queued.has(answer.id)) continue;
    unqueued2xx++;
    violations.push(`pid ${answer.pid} answered ${answer.status} for ${answer.id}, whose job the queue does not hold`);
  }

  let overlaps = 0;
  let doublesInWindow = 0;
  let doublesUnexplained = 0;
  for (const [id, runs] of byId) {
    overlaps += reportOverlaps(id, runs, violations);
    const effects = runs.filter((r) => r.effectAt !== undefined && !r.failed);
    for (let i = 1; i < effects.length; i++) {
      const before = effects[i - 1]!;
      const inWindow = before.end >= killedAt - CRASH_WINDOW.beforeKillMs && before.end <= (backAt.get(before.pid) ?? Infinity);
      if (inWindow) doublesInWindow++;
      else {
        doublesUnexplained++;
        violations.push(`delivery ${id} ran again in worker ${effects[i]!.pid} though its run in worker ${before.pid} ended outside the crash window`);
      }
    }
  }

  let commitsLost = 0;
  for (const id of accepted) {
    if (evidence.states.get(id) === 'done') continue;
    commitsLost++;
    violations.push(`delivery ${id} was answered 2xx but is ${evidence.states.get(id) ?? 'absent'} in the store`);
  }

  const allRuns = [...byId.values()].flat();
  return {
    figures: {
      deliveries: evidence.ids.length,
      lost,
      unqueued2xx,
      overlaps,
      runs: allRuns.length,
      failedRuns: allRuns.filter((r) => r.failed).length,
      doublesInWindow,
      doublesUnexplained,
      whileNoMaster,
      commitsLost,
      statuses,
    },
    violations,
  };
}
