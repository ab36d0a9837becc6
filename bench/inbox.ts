/**
 * The inbox measurements: time to 2xx when the handler takes 5 s (inbox vs direct), deliveries
 * enqueued per second by one receiver, processed per second by one worker with a 0 ms handler, and
 * board-ordered throughput with 1, 10 and 1,000 boards. Receivers and workers are child processes
 * on the compiled code, against the bench's local redis-server; the parent sends signed board
 * events, each a distinct delivery.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { machineBusySeconds } from './host-cpu';
import { childEnv, nodeCommand, pinned } from './ipc';
import { describePhases, type ReceiverPhases, type SentMark } from './inbox-phases';
import { post, signedEvent, WARM_UP_BOARD, type LatencyFigures, type SignedEvent } from './inbox-traffic';
import { childScript } from './paths';
import { describeStalls, measureStalls, type CoreStalls } from './stalls';

export interface InboxConfig {
  /** The handler's duration for the time-to-2xx measurement (5 s in the full run). */
  readonly slowHandlerMs: number;
  /** Open-loop rate and duration of the time-to-2xx measurement. */
  readonly latencyRate: number;
  readonly latencySeconds: number;
  /**
   * Deliveries the receiver takes before it (about 10 s of them in the full run): a receiver that has
   * run for a while, its code optimised by the JIT and its young generation settled (a fresh one's
   * scavenges copy about 1 MB each, several ms; after 20,000 deliveries about 0.4 MB, 1 to 3 ms).
   */
  readonly latencyWarmUp: number;
  /** Attempts at a time to 2xx when other processes disturb it (more than MAX_OTHER_CORES). */
  readonly latencyAttempts: number;
  /** How long the stall probe runs on each core before the time to 2xx is measured (bench/stalls.ts). */
  readonly stallSeconds: number;
  /** Deliveries enqueued (then processed) for the throughput measurements. */
  readonly throughputDeliveries: number;
  /** Events per ordered measurement, spread over the boards. */
  readonly orderedEvents: number;
  readonly boardCounts: readonly number[];
}

export const INBOX_FULL: InboxConfig = {
  slowHandlerMs: 5000,
  latencyRate: 200,
  latencySeconds: 10,
  latencyWarmUp: 20_000,
  latencyAttempts: 3,
  stallSeconds: 20,
  throughputDeliveries: 5000,
  orderedEvents: 2000,
  boardCounts: [1, 10, 1000],
};
export const INBOX_SMOKE: InboxConfig = {
  slowHandlerMs: 100,
  latencyRate: 50,
  latencySeconds: 0.3,
  latencyWarmUp: 20,
  latencyAttempts: 1,
  stallSeconds: 0.5,
  throughputDeliveries: 100,
  orderedEvents: 60,
  boardCounts: [1, 10, 1000],
};

/** Time to 2xx as the sender saw it, and the receiver's own time from arrival to answer (its delivery records). */
export interface LatencyReport extends LatencyFigures {
  readonly receiverP50: number;
  readonly receiverP99: number;
  /** Cores other processes than the bench's took during the measurement, on average. */
  readonly otherCores: number;
  /** With `--phases`: where the time went (bench/inbox-phases.ts). */
  readonly phases?: string[];
}

export interface InboxReport {
  readonly slowHandlerMs: number;
  readonly latencyRate: number;
  /** Deliveries the receiver took before the time to 2xx was measured. */
  readonly warmUp: number;
  /** How many times a disturbed time to 2xx was measured at the most. */
  readonly attempts: number;
  /** Time to 2xx, ms: p50 and p99, inbox and direct. */
  readonly inbox: LatencyReport;
  /**
   * The floor of the inbox's time to 2xx: the same processes and work, but the receiver answers
   * once it has verified and parsed the delivery, and claims and enqueues it after the answer.
   */
  readonly floor: LatencyReport;
  /** A second inbox measurement, traced: where its time to 2xx went (bench/inbox-phases.ts). */
  readonly phases: readonly string[];
  readonly direct: LatencyReport;
  /** Whether the receiver (with redis-server) and the worker ran on a core each for the time to 2xx. */
  readonly pinned: boolean;
  /** The machine's own stalls, measured just before the time to 2xx with nothing else running. */
  readonly stalls: readonly CoreStalls[];
  readonly enqueuedPerSecond: number;
  readonly processedPerSecond: number;
  readonly ordered: ReadonlyArray<{ readonly boards: number; readonly events: number; readonly perSecond: number }>;
}

const WARM_UP = 50;
// The closed loops that fill the queue use 10 connections.
const pooled = new Agent({ keepAlive: true, maxSockets: 10 });

type Role = 'receiver' | 'worker' | 'sender';
/**
 * The sender times each answer on its own event loop, so a GC pause of its own would count as the
 * receiver's time. A young generation larger than what its open loop allocates keeps it from
 * collecting during the loop (it reports any pause it had).
 */
const SENDER_FLAGS = ['--min-semi-space-size=64', '--max-semi-space-size=64'];
/** How the receiver answers: after enqueueing (inbox), after the handler (direct), or at once, enqueueing after (floor). */
type LatencyMode = 'inbox' | 'direct' | 'floor';

/** A child of the inbox measurements, talking in lines on stdout. */
class Proc {
  private out = '';
  private readonly waiters: Array<{ pattern: RegExp; resolve: (m: RegExpExecArray) => void }> = [];

  constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (chunk: Buffer) => {
      this.out += chunk.toString();
      for (const w of this.waiters.slice()) {
        const m = w.pattern.exec(this.out);
        if (m) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
  }

  /** `core`: the core to pin it to (when the machine allows), else it runs where the scheduler puts it. */
  static start(role: Role, env: Record<string, string>, core?: 0 | 1): Proc {
    const script = [...(role === 'sender' ? SENDER_FLAGS : []), childScript('children/inbox'), role];
    const { command, args } = core === undefined ? { command: process.execPath, args: script } : nodeCommand(core, script);
    return new Proc(spawn(command, args, { env: { ...childEnv(), ...env }, stdio: ['ignore', 'pipe', 'inherit'] }));
  }

  wait(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    const found = pattern.exec(this.out);
    if (found) return Promise.resolve(found);
    if (this.child.exitCode !== null || this.child.signalCode !== null)
      return Promise.reject(new Error(`bench inbox: a child exited (${this.child.exitCode ?? this.child.signalCode}) before ${pattern}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`bench inbox: no ${pattern} within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({ pattern, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      this.child.once('exit', (code) => reject(new Error(`bench inbox: a child exited (${code})`)));
    });
  }

  signal(name: NodeJS.Signals): void {
    process.kill(this.child.pid!, name);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    process.kill(this.child.pid!, 'SIGKILL');
    await exited;
  }
}

/**
 * A receiver process; `warm`: warmed up here (its queue connection is opened on the first delivery,
 * and the sockets and JIT settle over the next ones), else by the sender.
 */
async function receiver(env: Record<string, string>, core?: 0 | 1, warm = true): Promise<{ proc: Proc; port: number }> {
  const proc = Proc.start('receiver', env, core);
  const [, port] = await proc.wait(/ready (\d+)\n/, 15_000);
  if (warm) await Promise.all(Array.from({ length: WARM_UP }, () => post(Number(port), signedEvent(`${WARM_UP_BOARD}${randomUUID().slice(-12)}`, 1), pooled)));
  return { proc, port: Number(port) };
}

function describeLatency(f: LatencyReport): string {
  return `p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms (in the receiver: p50 ${f.receiverP50.toFixed(2)} ms, p99 ${f.receiverP99.toFixed(2)} ms; other processes took ${f.otherCores.toFixed(2)} cores; the sender's GC paused ${f.senderGc.pauses} times, ${f.senderGc.ms.toFixed(1)} ms)`;
}

/** Closed loop over 10 connections: sends `events` in order per board; resolves deliveries/s. */
async function send(port: number, events: readonly SignedEvent[]): Promise<number> {
  let next = 0;
  const failed: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < events.length) {
        const answer = await post(port, events[next++]!, pooled);
        if (answer.status !== 200) failed.push(answer.status);
      }
    }),
  );
  if (failed.length > 0) throw new Error(`bench inbox: ${failed.length} deliveries were not answered 200 (${failed.join(', ')})`);
  return events.length / ((performance.now() - started) / 1000);
}

/** Enqueues `events` through a receiver, then starts one worker and resolves what it handled per second. */
async function drain(redisUrl: string, events: readonly SignedEvent[], ordered: boolean): Promise<{ enqueued: number; processed: number }> {
  const env = { SVC_BENCH_REDIS_URL: redisUrl, INBOX_PREFIX: `bench${randomUUID().slice(0, 8)}`, ORDERED: ordered ? '1' : '0' };
  const r = await receiver(env);
  try {
    const enqueued = await send(r.port, events);
    // The 50 warm-up deliveries are in the queue too.
    const worker = Proc.start('worker', { ...env, EXPECT: String(events.length + WARM_UP), HANDLER_MS: '0' });
    try {
      const [, ms] = await worker.wait(/done ([\d.]+)\n/, 600_000);
      return { enqueued, processed: (events.length + WARM_UP) / (Number(ms) / 1000) };
    } finally {
      await worker.stop();
    }
  } finally {
    await r.proc.stop();
  }
}

// A measurement during which other processes took more than this many cores is run again (as the
// load rounds' cells are), up to the config's `latencyAttempts` in all; the least disturbed one is kept.
export const MAX_OTHER_CORES = 0.15;
const USER_HZ = 100;

/** CPU seconds a process has used (user and system), from /proc; 0 once it is gone. */
function cpuSecondsOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
  } catch {
    return 0;
  }
}

/** CPU seconds redis-server has used, as it reports them. */
async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  return ['used_cpu_sys', 'used_cpu_user'].reduce((sum, name) => sum + Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0), 0);
}

/**
 * The pid of the redis-server on `url`'s port (it names itself `redis-server <host>:<port>`): the
 * bench's parent starts it without a handle to its process.
 */
function redisPid(url: string): number | undefined {
  const port = new URL(url).port;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (/^redis-server \S+:(\d+)/.exec(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))?.[1] === port) return Number(entry);
    } catch {
      // A process that ended meanwhile.
    }
  }
  return undefined;
}

/** Pins redis-server to `core`; answers how to give it back the cores it had, or undefined when it could not. */
function pinRedis(url: string, core: 0 | 1): (() => void) | undefined {
  const pid = redisPid(url);
  if (pid === undefined) return undefined;
  const mask = /: ([0-9a-f]+)\s*$/.exec(spawnSync('taskset', ['-p', String(pid)], { encoding: 'utf8' }).stdout ?? '')?.[1];
  if (mask === undefined || spawnSync('taskset', ['-p', '-c', String(core), String(pid)]).status !== 0) return undefined;
  return () => void spawnSync('taskset', ['-p', mask, String(pid)]);
}

/**
 * Time to 2xx of one receiver in `mode`, the handler taking `config.slowHandlerMs`: an open loop
 * from a sender process. `pin` (where the machine allows): the receiver and redis-server on core 0,
 * the worker on core 1. In production each has CPU of its own; on two cores the receiver and Redis
 * take turns on one (the receiver waits while Redis works), and neither waits behind the worker's
 * CPU, the heavy one (1,000 runs in flight). Redis serves the worker's commands as well. The sender
 * runs where the scheduler puts it. The time to 2xx is a tail figure that any other process on the
 * machine moves, so a disturbed measurement is run again.
 */
async function inboxLatency(redisUrl: string, config: InboxConfig, mode: LatencyMode, pin = pinned, phases = false): Promise<LatencyReport> {
  let best: LatencyReport | undefined;
  for (let attempt = 1; attempt <= config.latencyAttempts && (best === undefined || best.otherCores > MAX_OTHER_CORES); attempt++) {
    const figures = await latencyOnce(redisUrl, config, mode, pin, phases);
    if (best === undefined || figures.otherCores < best.otherCores) best = figures;
  }
  return best!;
}

async function latencyOnce(redisUrl: string, config: InboxConfig, mode: LatencyMode, pin: boolean, phases: boolean): Promise<LatencyReport> {
  const core = (n: 0 | 1) => (pin ? n : undefined);
  const env = {
    SVC_BENCH_REDIS_URL: redisUrl,
    HANDLER_MS: String(config.slowHandlerMs),
    MODE: mode,
    INBOX_PREFIX: `bench${randomUUID().slice(0, 8)}`,
    PHASES: phases ? '1' : '0',
  };
  const redis = new Redis(redisUrl);
  const unpinRedis = pin ? pinRedis(redisUrl, 0) : undefined;
  const r = await receiver(env, core(0), false);
  // In inbox mode (and its floor) a worker runs the slow handlers meanwhile, as in production.
  const worker = mode !== 'direct' ? Proc.start('worker', { ...env, CONCURRENCY: '2000', WARM_UP_EXPECT: String(config.latencyWarmUp) }, core(1)) : undefined;
  let sender: Proc | undefined;
  try {
    if (worker) await worker.wait(/ready\n/, 15_000);
    // A receiver that has run for a while runs code the JIT has optimised; a fresh one interprets
    // it. The warm-up deliveries' handlers return at once, and the worker is done with them before
    // the measurement starts.
    await send(
      r.port,
      Array.from({ length: config.latencyWarmUp }, () => signedEvent(`${WARM_UP_BOARD}${randomUUID().slice(-12)}`, 1)),
    );
    if (worker) await worker.wait(/warmed\n/, 60_000);
    // The CPU the bench's own processes use over the open loop, to tell what other processes took.
    const ours = async () => cpuSecondsOf(r.proc.child.pid) + cpuSecondsOf(worker?.child.pid) + (await redisCpuSeconds(redis));
    sender = Proc.start('sender', {
      PHASES: env.PHASES,
      PORT: String(r.port),
      RATE: String(config.latencyRate),
      SECONDS: String(config.latencySeconds),
      WARM_UP: String(WARM_UP),
    });
    await sender.wait(/start\n/, 30_000);
    const before = { at: performance.now(), busy: machineBusySeconds(), ours: await ours() };
    const [, sent] = await sender.wait(/result (.+)\n/, 30_000 + config.latencySeconds * 1000 + config.slowHandlerMs);
    const after = { at: performance.now(), busy: machineBusySeconds(), ours: await ours() };
    r.proc.signal('SIGUSR2');
    const [, own] = await r.proc.wait(/own (.+)\n/, 5_000);
    const { cpuSeconds, sent: marks, ...figures } = JSON.parse(sent!) as LatencyFigures & { cpuSeconds: number; sent?: SentMark[] };
    const inReceiver = JSON.parse(own!) as { p50: number; p99: number; phases?: ReceiverPhases };
    const busy = before.busy === undefined || after.busy === undefined ? Number.NaN : after.busy - before.busy;
    const otherCores = Math.max(0, busy - (after.ours - before.ours) - cpuSeconds) / ((after.at - before.at) / 1000);
    const traced = marks !== undefined && inReceiver.phases !== undefined ? { phases: describePhases(marks, inReceiver.phases) } : {};
    return { ...figures, receiverP50: inReceiver.p50, receiverP99: inReceiver.p99, otherCores, ...traced };
  } finally {
    await sender?.stop();
    await worker?.stop();
    await r.proc.stop();
    redis.disconnect();
    unpinRedis?.();
  }
}

export async function measureInbox(redisUrl: string, config: InboxConfig, say: (line: string) => void): Promise<InboxReport> {
  const stalls = await measureStalls(config.stallSeconds);
  say(`  the machine's own stalls over ${config.stallSeconds} s: ${describeStalls(stalls)}`);
  const inbox = await inboxLatency(redisUrl, config, 'inbox');
  say(`  time to 2xx, ${config.slowHandlerMs} ms handler, inbox: ${describeLatency(inbox)} (${inbox.count} deliveries at ${config.latencyRate}/s)`);
  const traced = await latencyOnce(redisUrl, config, 'inbox', pinned, true);
  say(`  traced: ${describeLatency(traced)}`);
  for (const line of traced.phases ?? []) say(`    ${line}`);
  const floor = await inboxLatency(redisUrl, config, 'floor');
  say(`  floor (answered before the claim and the enqueue): ${describeLatency(floor)}`);
  const direct = await inboxLatency(redisUrl, config, 'direct');
  say(`  time to 2xx, ${config.slowHandlerMs} ms handler, direct: ${describeLatency(direct)}`);

  const plain = Array.from({ length: config.throughputDeliveries }, () => signedEvent(randomUUID(), 1));
  const { enqueued, processed } = await drain(redisUrl, plain, false);
  say(`  ${Math.round(enqueued)} deliveries/s enqueued by one receiver, ${Math.round(processed)}/s processed by one worker (0 ms handler)`);

  const ordered: Array<{ boards: number; events: number; perSecond: number }> = [];
  for (const boards of config.boardCounts) {
    const ids = Array.from({ length: boards }, () => randomUUID());
    const perBoard = Math.max(1, Math.floor(config.orderedEvents / boards));
    // Interleaved across boards, each board's events in sequence order.
    const events = Array.from({ length: perBoard }, (_, s) => ids.map((b) => signedEvent(b, s + 1))).flat();
    const { processed: perSecond } = await drain(redisUrl, events, true);
    ordered.push({ boards, events: events.length, perSecond });
    say(`  ordered, ${boards} board(s): ${Math.round(perSecond)} events/s (${events.length} events, one worker)`);
  }
  pooled.destroy();
  return {
    slowHandlerMs: config.slowHandlerMs,
    latencyRate: config.latencyRate,
    warmUp: config.latencyWarmUp,
    attempts: config.latencyAttempts,
    inbox,
    floor,
    phases: traced.phases ?? [],
    direct,
    pinned,
    stalls,
    enqueuedPerSecond: enqueued,
    processedPerSecond: processed,
    ordered,
  };
}

/**
 * `npx tsx bench/inbox.ts [--latency [--phases]] [--unpinned] [--rounds N]`: the inbox measurements alone,
 * against a redis-server of their own, while working on the inbox (`npm run bench` runs them with
 * everything else). `--latency`: only the inbox mode's time to 2xx and its floor's, `--rounds`
 * times, to show their spread on a shared machine; `--unpinned`: with the receiver, redis-server and the worker where
 * the scheduler puts them; `--phases`: where the time to 2xx went (bench/inbox-phases.ts).
 */
async function main(): Promise<void> {
  const { compileForChildren } = await import('./compile');
  const { RedisServer } = await import('../test/support/redis-server');
  const flag = (name: string) => process.argv.includes(name);
  const rounds = flag('--rounds') ? Number(process.argv[process.argv.indexOf('--rounds') + 1]) : 1;
  compileForChildren();
  const redis = await RedisServer.start({ appendOnly: false });
  try {
    if (flag('--latency'))
      console.log(`the machine's own stalls over ${INBOX_FULL.stallSeconds} s: ${describeStalls(await measureStalls(INBOX_FULL.stallSeconds))}`);
    for (let round = 1; round <= rounds; round++) {
      if (flag('--latency')) {
        for (const mode of ['inbox', 'floor'] as const) {
          const figures = await inboxLatency(redis.url, INBOX_FULL, mode, pinned && !flag('--unpinned'), mode === 'inbox' && flag('--phases'));
          console.log(`round ${round}, ${mode}: ${describeLatency(figures)}, ${figures.count} deliveries, ${figures.non2xx} not 2xx`);
          for (const line of figures.phases ?? []) console.log(line);
        }
      } else {
        await measureInbox(redis.url, INBOX_FULL, (line) => console.log(line));
      }
    }
  } finally {
    pooled.destroy();
    await redis.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
