/**
 * The fault test's Redis Cluster run (`npm run test:fault -- redis-cluster`): six redis-server
 * processes in cluster mode (three masters, three replicas), two receivers and two workers of a
 * board webhook in inbox mode, every process a child known by its pid. The sender sends 3,000
 * deliveries, each twice (every delivery is repeated once it got a 2xx); while they flow, the master
 * of the queue's slot is killed with SIGKILL, its replica takes over by the cluster's own failover,
 * and the old master comes back as the new one's replica. Then it checks, from what the workers
 * recorded outside their processes and from the queue and the store: nothing lost, no 2xx for a
 * delivery the queue does not hold, no two runs of one delivery at once, a second run only from the
 * crash window, and only 503s while the slot had no master.
 */
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { Queue } from 'bullmq';
import { redisStoreKey } from '../../src/dedup/redis-store';
import { jobIdOf } from '../../src/inbox/inbox-job';
import { canConnect, freePort } from '../support/net';
import { RedisCluster } from '../support/redis-cluster';
import { endAll, signal, startChild, type Child, type Exit } from './children';
import { config } from './config';
import { EffectReader, effectFile, wallNow } from './effect-log';
import { judgeFailover, CRASH_WINDOW, type Failover, type FailoverFigures, type WorkerRecord } from './failover-verdict';
import { Sender, type SenderResult } from './sender';
import type { KeyState } from './store-kind';

const CHILD_SCRIPT = join(__dirname, 'inbox-child.ts');
/** The queue's prefix, as the inbox puts it on a cluster by default; its slot is the one whose master dies. */
const QUEUE_PREFIX = '{svc-webhooks}';
/** When the master dies, in real ms after the sender started: the deliveries are in full flow. */
const KILL_AFTER_MS = 8_000;
const NODE_TIMEOUT_MS = 1_500;
const BUDGET_MS = 150_000;
const START_TIMEOUT_MS = 30_000;

/** A receiver or worker process: started, its effect file read, ended by SIGTERM. */
class InboxProcess {
  private child: Child | undefined;
  private reader: EffectReader | undefined;
  exit: Exit | undefined;

  constructor(
    readonly role: 'receiver' | 'worker',
    private readonly dir: string,
    private readonly env: Readonly<Record<string, string>>,
  ) {}

  get pid(): number {
    return this.child!.pid;
  }

  get url(): string {
    return `http://127.0.0.1:${this.env.FAULT_PORT}/webhooks/board`;
  }

  async start(): Promise<void> {
    const log = openSync(join(this.dir, `${this.role}-${this.env.FAULT_PORT ?? Date.now()}.log`), 'a');
    const child = startChild(process.execPath, ['--import', 'tsx', CHILD_SCRIPT], {
      stdio: ['ignore', log, log],
      env: { ...process.env, ...this.env, FAULT_ROLE: this.role, FAULT_DIR: this.dir },
    });
    closeSync(log);
    this.child = child;
    this.reader = new EffectReader(effectFile(this.dir, child.pid));
    if (this.role === 'worker') return;
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await canConnect(Number(this.env.FAULT_PORT)))) {
      if (child.ended() || Date.now() > deadline) throw new Error(`the receiver (pid ${child.pid}) did not listen; see ${this.dir}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** SIGTERM: it closes gracefully and must exit 0 (SIGKILL after 30 s). */
  async terminate(): Promise<void> {
    const child = this.child!;
    signal(child, 'SIGTERM');
    const timer = setTimeout(() => signal(child, 'SIGKILL'), 30_000);
    this.exit = await child.exited;
    clearTimeout(timer);
  }

  record(): WorkerRecord {
    this.reader!.poll();
    return { pid: this.pid, lines: this.reader!.lines, ...(this.exit === undefined ? {} : { exitCode: this.exit.code }) };
  }
}

/** Kills the master of the queue's slot once deliveries flow, times the failover, and brings the old master back as a replica. */
async function failMaster(cluster: RedisCluster): Promise<Failover & { replicaBackAt: number; port: number }> {
  await new Promise((r) => setTimeout(r, KILL_AFTER_MS));
  const slot = await cluster.slotOf(QUEUE_PREFIX);
  const master = await cluster.masterOf(slot);
  if (master === undefined) throw new Error(`no master serves slot ${slot} before the kill`);
  await cluster.kill(master);
  const killedAt = wallNow();
  // The last poll that found no master began before any node took the slot over.
  let lastWithoutMaster = killedAt;
  for (;;) {
    const polledAt = wallNow();
    if ((await cluster.masterOf(slot)) !== undefined) break;
    lastWithoutMaster = polledAt;
    if (polledAt - killedAt > 30_000) throw new Error(`no replica took slot ${slot} over within 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const promotedAt = wallNow();
  await cluster.restart(master);
  await cluster.settled(30_000);
  return { killedAt, noMasterUntil: lastWithoutMaster, promotedAt, replicaBackAt: wallNow(), port: master.port };
}

async function queuedIds(seeds: readonly string[], ids: readonly string[]): Promise<Set<string>> {
  const connection = new Cluster([...seeds], { redisOptions: { maxRetriesPerRequest: null } });
  const queue = new Queue('board', { connection, prefix: QUEUE_PREFIX });
  try {
    const queued = new Set<string>();
    for (let i = 0; i < ids.length; i += 200) {
      const chunk = ids.slice(i, i + 200);
      const jobs = await Promise.all(chunk.map((id) => queue.getJob(jobIdOf(id))));
      chunk.forEach((id, j) => jobs[j] !== undefined && queued.add(id));
    }
    return queued;
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

async function storeStates(seeds: readonly string[], ids: readonly string[]): Promise<Map<string, KeyState>> {
  const client = new Cluster([...seeds]);
  try {
    const states = new Map<string, KeyState>();
    for (let i = 0; i < ids.length; i += 200) {
      const chunk = ids.slice(i, i + 200);
      const values = await Promise.all(chunk.map((id) => client.get(redisStoreKey('svc-webhooks:', id))));
      chunk.forEach((id, j) => states.set(id, values[j] === 'done' ? 'done' : values[j] == null ? 'absent' : 'claimed'));
    }
    return states;
  } finally {
    client.disconnect();
  }
}

/** Waits (at most `withinMs`) until every delivery answered 2xx has had a run reach its side effect. */
async function drained(sent: SenderResult, workers: readonly InboxProcess[], withinMs: number): Promise<void> {
  const accepted = new Set(sent.answers.filter((a) => a.status >= 200 && a.status < 300).map((a) => a.id));
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const handled = new Set(
      workers.flatMap((w) =>
        w
          .record()
          .lines.filter((l) => l.mark === 'E')
          .map((l) => l.id),
      ),
    );
    if ([...accepted].every((id) => handled.has(id))) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function summary(
  sent: SenderResult,
  failover: Awaited<ReturnType<typeof failMaster>>,
  f: FailoverFigures,
  seconds: number,
  violations: readonly string[],
): string {
  const list = (counts: Readonly<Record<string, number>>) =>
    Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ') || 'none';
  const lines = [
    `fault test, redis-cluster (6 redis-server in cluster mode, cluster-node-timeout ${NODE_TIMEOUT_MS} ms; inbox prefix ${QUEUE_PREFIX}, waitForReplicas 1): ${f.deliveries} deliveries, each sent twice, to 2 receivers, handled by 2 workers, ${seconds.toFixed(1)} s`,
    `  sender:        ${sent.answers.length} requests (${list(f.statuses)}); ${sent.repeats} repeats, ${sent.concurrent} sent to both receivers at once; gave up on ${sent.givenUp.length}`,
    `  failover:      master on port ${failover.port} killed -9; the slot had no master for at least ${(failover.noMasterUntil - failover.killedAt).toFixed(0)} ms and a replica served it after ${(failover.promotedAt - failover.killedAt).toFixed(0)} ms; the old master was back as its replica after ${((failover.replicaBackAt - failover.killedAt) / 1000).toFixed(1)} s`,
    `  no master:     answers to requests sent after the kill and answered while the slot had no master: ${list(f.whileNoMaster)}`,
    `  handler runs:  ${f.runs} (${f.failedRuns} injected failures, retried)`,
    `  lost:          ${f.lost}`,
    `  2xx unqueued:  ${f.unqueued2xx}`,
    `  overlapping:   ${f.overlaps}`,
    `  run twice:     ${f.doublesInWindow + f.doublesUnexplained} (the first run ended in the crash window, from ${CRASH_WINDOW.beforeKillMs} ms before the kill until its worker took a job from the new master: ${f.doublesInWindow}; otherwise: ${f.doublesUnexplained})`,
    `  commits lost:  ${f.commitsLost} (answered 2xx, not done in the store)`,
    `  result:        ${violations.length === 0 ? 'PASS' : `FAIL, ${violations.length} violations:`}`,
    ...violations.slice(0, 20).map((v) => `    - ${v}`),
  ];
  if (violations.length > 20) lines.push(`    … and ${violations.length - 20} more`);
  return lines.join('\n');
}

/** One cluster run; resolves whether it passed. */
export async function runClusterFailover(): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-fault-cluster-'));
  const started = performance.now();
  let cluster: RedisCluster | undefined;
  let passed = false;
  try {
    cluster = await RedisCluster.start({ nodeTimeoutMs: NODE_TIMEOUT_MS, launch: (command, args) => startChild(command, args, { stdio: 'ignore' }) });
    const env = { FAULT_CLUSTER: cluster.seeds.join(',') };
    const receivers = [
      new InboxProcess('receiver', dir, { ...env, FAULT_PORT: String(await freePort()) }),
      new InboxProcess('receiver', dir, { ...env, FAULT_PORT: String(await freePort()) }),
    ];
    const workers = [new InboxProcess('worker', dir, env), new InboxProcess('worker', dir, env)];
    await Promise.all([...receivers, ...workers].map((p) => p.start()));

    const sender = new Sender(
      receivers.map((r) => r.url),
      { repeatShare: 1 },
    );
    const budget = setTimeout(() => sender.stop(), BUDGET_MS);
    const [sent, failover] = await Promise.all([sender.run(), failMaster(cluster)]);
    clearTimeout(budget);
    await drained(sent, workers, 30_000);
    await Promise.all([...receivers, ...workers].map((p) => p.terminate()));

    const verdict = judgeFailover({
      ids: sent.ids,
      answers: sent.answers,
      workers: workers.map((w) => w.record()),
      queued: await queuedIds(cluster.seeds, sent.ids),
      states: await storeStates(cluster.seeds, sent.ids),
      failover,
    });
    const violations = [...verdict.violations];
    for (const r of receivers) if (r.exit?.code !== 0) violations.push(`receiver ${r.pid} exited with ${r.exit?.code} after SIGTERM`);
    if (sent.givenUp.length > 0 || sent.repeatsGivenUp > 0)
      violations.push(`the sender gave up on ${sent.givenUp.length} deliveries and ${sent.repeatsGivenUp} repeats`);
    if (sent.ids.length < config.deliveries) violations.push(`only ${sent.ids.length} of ${config.deliveries} deliveries were sent`);
    // A failover that no request saw proves nothing: say so rather than pass.
    if ((verdict.figures.whileNoMaster['503 inbox_unavailable'] ?? 0) === 0)
      violations.push('no delivery was refused while the slot had no master: the failover did not reach the receivers');
    if (performance.now() - started > BUDGET_MS) violations.push(`the run took longer than its budget of ${BUDGET_MS} ms`);
    console.log(summary(sent, failover, verdict.figures, (performance.now() - started) / 1000, violations));
    passed = violations.length === 0;
    return passed;
  } finally {
    await cluster?.close().catch(() => undefined);
    await endAll();
    if (passed && process.env.FAULT_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
    else console.log(`receiver and worker logs and effect files kept in ${dir}`);
  }
}
