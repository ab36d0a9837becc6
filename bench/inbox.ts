/**
 * The inbox measurements: time to 2xx when the handler takes 5 s (inbox vs direct), deliveries
 * enqueued per second by one receiver, processed per second by one worker with a 0 ms handler, and
 * board-ordered throughput with 1, 10 and 1,000 boards. Receivers and workers are child processes
 * on the compiled code, against the bench's local redis-server; the parent sends signed board
 * events, each a distinct delivery.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { childEnv } from './ipc';
import { childScript, ROOT } from './paths';
import { SVC_SECRET } from './signing';

export interface InboxConfig {
  /** The handler's duration for the time-to-2xx measurement (5 s in the full run). */
  readonly slowHandlerMs: number;
  /** Open-loop rate and duration of the time-to-2xx measurement. */
  readonly latencyRate: number;
  readonly latencySeconds: number;
  /** Deliveries enqueued (then processed) for the throughput measurements. */
  readonly throughputDeliveries: number;
  /** Events per ordered measurement, spread over the boards. */
  readonly orderedEvents: number;
  readonly boardCounts: readonly number[];
}

export const INBOX_FULL: InboxConfig = { slowHandlerMs: 5000, latencyRate: 200, latencySeconds: 5, throughputDeliveries: 5000, orderedEvents: 2000, boardCounts: [1, 10, 1000] };
export const INBOX_SMOKE: InboxConfig = { slowHandlerMs: 100, latencyRate: 50, latencySeconds: 0.3, throughputDeliveries: 100, orderedEvents: 60, boardCounts: [1, 10, 1000] };

export interface InboxReport {
  readonly slowHandlerMs: number;
  readonly latencyRate: number;
  /** Time to 2xx, ms: p50 and p99, inbox and direct. */
  readonly inbox: { readonly p50: number; readonly p99: number; readonly count: number; readonly non2xx: number };
  readonly direct: { readonly p50: number; readonly p99: number; readonly count: number; readonly non2xx: number };
  readonly enqueuedPerSecond: number;
  readonly processedPerSecond: number;
  readonly ordered: ReadonlyArray<{ readonly boards: number; readonly events: number; readonly perSecond: number }>;
}

const TEMPLATE = JSON.parse(readFileSync(join(ROOT, 'examples', 'fixtures', 'board', 'task.updated.json'), 'utf8')) as Record<string, unknown>;
const WARM_UP = 50;
// The closed loops use 10 connections; the open loop opens as many as the answers in flight need,
// as svc does (with a 5 s handler in direct mode, a thousand at 200 deliveries/s).
const pooled = new Agent({ keepAlive: true, maxSockets: 10 });
const open = new Agent({ keepAlive: true });

function signedEvent(board: string, sequence: number): { body: string; headers: Record<string, string> } {
  const id = randomUUID();
  const body = JSON.stringify({ ...TEMPLATE, id, sequence, board: { ...(TEMPLATE.board as object), id: board } });
  const ts = String(Math.floor(Date.now() / 1000));
  const mac = createHmac('sha256', SVC_SECRET).update(`${ts}.`).update(body).digest('hex');
  return {
    body,
    headers: { 'content-type': 'application/json', 'x-svc-event': 'task.updated', 'x-svc-delivery': id, 'x-svc-timestamp': ts, 'x-svc-signature': `v1=${mac}`, 'content-length': String(Buffer.byteLength(body)) },
  };
}

/** One POST over the keep-alive agent; resolves the status and the time to the answer's headers. */
function post(port: number, event: { body: string; headers: Record<string, string> }, agent = pooled): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request({ host: '127.0.0.1', port, path: '/webhooks/board', method: 'POST', headers: event.headers, agent }, (res) => {
      const ms = performance.now() - started;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms }));
    });
    req.on('error', reject);
    req.end(event.body);
  });
}

class Proc {
  private out = '';
  private readonly waiters: Array<{ pattern: RegExp; resolve: (m: RegExpExecArray) => void }> = [];

  constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (chunk: Buffer) => {
      this.out += chunk.toString();
      for (const w of [...this.waiters]) {
        const m = w.pattern.exec(this.out);
        if (m) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
  }

  static start(role: 'receiver' | 'worker', env: Record<string, string>): Proc {
    const child = spawn(process.execPath, [childScript('children/inbox'), role], { env: { ...childEnv(), ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    return new Proc(child);
  }

  wait(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    const found = pattern.exec(this.out);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`bench inbox: no ${pattern} within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({ pattern, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      this.child.once('exit', (code) => reject(new Error(`bench inbox: a child exited (${code})`)));
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    process.kill(this.child.pid!, 'SIGKILL');
    await exited;
  }
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** A receiver process, warmed up: its queue connection is opened on the first delivery, and the sockets and JIT settle over the next ones. */
async function receiver(env: Record<string, string>): Promise<{ proc: Proc; port: number }> {
  const proc = Proc.start('receiver', env);
  const [, port] = await proc.wait(/ready (\d+)\n/, 15_000);
  await Promise.all(Array.from({ length: WARM_UP }, () => post(Number(port), signedEvent(`warm-up-${randomUUID()}`, 1), open)));
  return { proc, port: Number(port) };
}

/** Open loop: `rate` deliveries a second for `seconds`, each answer timed. */
async function timeTo2xx(port: number, rate: number, seconds: number) {
  const answers: Array<Promise<{ status: number; ms: number }>> = [];
  const count = Math.max(1, Math.round(rate * seconds));
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    answers.push(post(port, signedEvent(randomUUID(), 1), open));
  }
  const done = await Promise.all(answers);
  const ms = done.map((a) => a.ms);
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), count: done.length, non2xx: done.filter((a) => a.status < 200 || a.status >= 300).length };
}

/** Closed loop over 10 connections: sends `events` in order per board; resolves deliveries/s. */
async function send(port: number, events: ReadonlyArray<{ body: string; headers: Record<string, string> }>): Promise<number> {
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < events.length) {
        const answer = await post(port, events[next++]!);
        if (answer.status !== 200) failed++;
      }
    }),
  );
  if (failed > 0) throw new Error(`bench inbox: ${failed} deliveries were not answered 200`);
  return events.length / ((performance.now() - started) / 1000);
}

/** Enqueues `events` through a receiver, then starts one worker and resolves what it handled per second. */
async function drain(redisUrl: string, events: ReadonlyArray<{ body: string; headers: Record<string, string> }>, ordered: boolean): Promise<{ enqueued: number; processed: number }> {
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

export async function measureInbox(redisUrl: string, config: InboxConfig, say: (line: string) => void): Promise<InboxReport> {
  const base = { SVC_BENCH_REDIS_URL: redisUrl, HANDLER_MS: String(config.slowHandlerMs) };
  const latency = async (mode: 'inbox' | 'direct') => {
    const env = { ...base, MODE: mode, INBOX_PREFIX: `bench${randomUUID().slice(0, 8)}` };
    const r = await receiver(env);
    // In inbox mode a worker runs the slow handlers meanwhile, as in production.
    const worker = mode === 'inbox' ? Proc.start('worker', { ...env, CONCURRENCY: '2000' }) : undefined;
    try {
      if (worker) await worker.wait(/ready\n/, 15_000);
      return await timeTo2xx(r.port, config.latencyRate, config.latencySeconds);
    } finally {
      await worker?.stop();
      await r.proc.stop();
    }
  };
  const inbox = await latency('inbox');
  say(`  time to 2xx, ${config.slowHandlerMs} ms handler, inbox: p50 ${inbox.p50.toFixed(2)} ms, p99 ${inbox.p99.toFixed(2)} ms (${inbox.count} deliveries at ${config.latencyRate}/s)`);
  const direct = await latency('direct');
  say(`  time to 2xx, ${config.slowHandlerMs} ms handler, direct: p50 ${direct.p50.toFixed(2)} ms, p99 ${direct.p99.toFixed(2)} ms`);

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
  open.destroy();
  return { slowHandlerMs: config.slowHandlerMs, latencyRate: config.latencyRate, inbox, direct, enqueuedPerSecond: enqueued, processedPerSecond: processed, ordered };
}
