import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { svcBoardWebhook, type DeliveryRecord } from '../../src';
import { runCli } from '../cli/run-cli';
import { memoryLogger } from '../support/apps';
import { deliver, deliverUntilAccepted, eventually } from '../support/inbox';
import { RedisServer } from '../support/redis-server';
import { BOARD_SECRET, fixture, signBoard, onBoard } from '../support/sign';

const ROOT = join(__dirname, '..', '..');
const CHILD = join(__dirname, 'children', 'inbox-node.ts');

interface Run {
  readonly id: string;
  readonly board: string;
  readonly sequence: number;
  readonly pid: number;
  readonly start?: number;
  readonly end?: number;
}

let redis: RedisServer;
const children: ChildProcess[] = [];

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL');
  await redis.close();
});

/** Starts one receiver or worker process and resolves once it is ready (with the receiver's port). */
function start(
  role: 'receiver' | 'worker',
  prefix: string,
  ordered = false,
  extraEnv: Record<string, string> = {},
): Promise<{ child: ChildProcess; port?: number }> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', CHILD, role], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, REDIS_URL: redis.url, INBOX_PREFIX: prefix, HANDLER_MS: '300', ORDERED: ordered ? '1' : '0', ...extraEnv },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /ready ?(\d*)\n/.exec(out);
      if (line) resolve({ child, ...(line[1] ? { port: Number(line[1]) } : {}) });
    });
    child.once('exit', (code) => reject(new Error(`${role} exited early (${code})`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(child.pid!, 'SIGTERM');
  await exited;
}

/** Starts two receivers and three workers, sends `events` to both receivers, kills the first worker mid-job; resolves every run recorded. */
async function killOneWorkerMidJob(events: Array<Record<string, any>>, ordered: boolean): Promise<{ all: Run[]; victim: number; killedAt: number }> {
  const prefix = `p${randomUUID().slice(0, 8)}`;
  // The victim's handlers take longer, so that the kill finds one of its runs in flight even when
  // this process is slow to send it (a loaded machine).
  const [r1, r2, w1, w2, w3] = await Promise.all([
    start('receiver', prefix, ordered),
    start('receiver', prefix, ordered),
    start('worker', prefix, ordered, { HANDLER_MS: '1500' }),
    start('worker', prefix, ordered),
    start('worker', prefix, ordered),
  ]);
  const receivers = [r1, r2].map((r) => `http://127.0.0.1:${r.port}/webhooks/board`);
  const results = new Redis(redis.url);
  const runs = async () => (await results.lrange(`${prefix}:runs`, 0, -1)).map((line) => JSON.parse(line) as Run);
  try {
    // Every delivery goes to both receivers at once, as svc's retries may; each is retried until
    // accepted (a busy machine may answer 409 or 503 first), as svc does.
    await Promise.all(events.flatMap((e) => receivers.map((r) => deliverUntilAccepted(r, signBoard(e)))));

    const victim = w1.child.pid!;
    await eventually(async () => (await runs()).some((r) => r.pid === victim && r.start !== undefined), 10_000, 'the first worker to start a job');
    process.kill(victim, 'SIGKILL');
    const killedAt = Date.now();
    await new Promise((r) => w1.child.once('exit', r));
    const ended = (all: Run[]) => new Set(all.filter((r) => r.end !== undefined).map((r) => r.id));
    await eventually(async () => ended(await runs()).size === events.length, 30_000, 'every delivery to be handled');
    return { all: await runs(), victim, killedAt };
  } finally {
    results.disconnect();
    await Promise.all([r1, r2, w2, w3].map((p) => stop(p.child)));
  }
}

/** Each run's [start, end]; a killed run ends at the kill. */
function intervals(all: readonly Run[], killedAt: number, keep: (r: Run) => boolean): Array<readonly [number, number]> {
  return all
    .filter((r) => r.start !== undefined && keep(r))
    .map((r) => [r.start!, all.find((x) => x.id === r.id && x.pid === r.pid && x.end !== undefined && x.end >= r.start!)?.end ?? killedAt] as const)
    .sort((a, b) => a[0] - b[0]);
}

/**
 * The completed runs, in the order they ended, without those the crash window explains: a run the
 * killed worker finished (before the kill) whose job it could not mark processed, so another worker
 * ran it again.
 */
function completed(all: readonly Run[], victim: number, killedAt: number): Run[] {
  const ends = all.filter((r) => r.end !== undefined).sort((a, b) => a.end! - b.end!);
  return ends.filter((r) => {
    if (r.pid !== victim) return true;
    expect(r.end!).toBeLessThanOrEqual(killedAt);
    return !ends.some((x) => x.id === r.id && x.pid !== victim);
  });
}

function expectDisjoint(spans: Array<readonly [number, number]>): void {
  for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
}

describe('two receivers and three workers in separate processes, sharing one Redis', () => {
  it('lose nothing and never run one delivery twice at once when a worker is killed (SIGKILL) mid-job', async () => {
    const events = Array.from({ length: 40 }, () => fixture('board', 'task.created'));
    const { all, victim, killedAt } = await killOneWorkerMidJob(events, false);
    // Nothing lost, and each handler completed once (besides the crash window's re-run).
    const done = completed(all, victim, killedAt);
    for (const e of events) expect(done.filter((r) => r.id === e.id)).toHaveLength(1);
    // The killed worker's cut run was taken over by another process.
    const cut = all.filter((r) => r.pid === victim && r.start !== undefined && !all.some((x) => x.pid === victim && x.id === r.id && x.end !== undefined));
    expect(cut.length).toBeGreaterThan(0);
    for (const c of cut) expect(all.some((r) => r.id === c.id && r.pid !== victim && r.end !== undefined)).toBe(true);
    // No delivery ran in two places at once.
    for (const e of events) expectDisjoint(intervals(all, killedAt, (r) => r.id === e.id));
  }, 60_000);

  it("keep board order through the kill: each board's events complete in sequence order, one at a time", async () => {
    const boards = Array.from({ length: 5 }, () => randomUUID());
    const events = boards
      .flatMap((b) => Array.from({ length: 6 }, (_, i) => onBoard({ ...fixture('board', 'task.updated'), sequence: i + 1 }, b)))
      // A fixed shuffle: 7 and 30 are coprime, so this visits every event once.
      .map((_, i, all) => all[(i * 7) % all.length]!);
    const { all, victim, killedAt } = await killOneWorkerMidJob(events, true);
    const done = completed(all, victim, killedAt);
    for (const b of boards) {
      expect(done.filter((r) => r.board === b).map((r) => r.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
      expectDisjoint(intervals(all, killedAt, (r) => r.board === b));
    }
  }, 60_000);

  it('make a delivery whose worker keeps disappearing a dead letter past maxStalledCount: logged at error by the worker that finds it, listed by the CLI', async () => {
    const prefix = `s${randomUUID().slice(0, 8)}`;
    const [receiver, doomed] = await Promise.all([start('receiver', prefix), start('worker', prefix, false, { MAX_STALLED: '0' })]);
    const results = new Redis(redis.url);
    const log = memoryLogger();
    const records: DeliveryRecord[] = [];
    const survivor = svcBoardWebhook({ secret: BOARD_SECRET, logger: log.logger, inbox: { connection: redis.url, prefix } }).onDelivery((r) => records.push(r));
    try {
      const event = fixture('board', 'task.created');
      expect((await deliver(`http://127.0.0.1:${receiver.port}/webhooks/board`, signBoard(event))).status).toBe(200);
      await eventually(async () => (await results.llen(`${prefix}:runs`)) > 0, 10_000, 'the doomed worker to start the job');
      process.kill(doomed.child.pid!, 'SIGKILL');
      const worker = survivor.work({ lockDurationMs: 1000, stalledIntervalMs: 300, maxStalledCount: 0 });
      try {
        await eventually(() => records.some((r) => r.queue === 'dead'), 10_000, 'the stalled job to be found dead');
      } finally {
        await worker.close();
      }
      expect(records.filter((r) => r.queue === 'dead').map((r) => r.deliveryId)).toEqual([event.id]);
      expect(log.lines.filter((l) => l.level === 50 && l.deliveryId === event.id && l.queue === 'dead')).toHaveLength(1);
      const listed = await runCli(['inbox', 'list', '--json', '--prefix', prefix, '--redis-url', redis.url]);
      expect(JSON.parse(listed.stdout).map((l: { deliveryId: string }) => l.deliveryId)).toEqual([event.id]);
    } finally {
      results.disconnect();
      await stop(receiver.child);
    }
  }, 30_000);
});
