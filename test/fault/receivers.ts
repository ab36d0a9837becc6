import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { canConnect } from '../support/net';
import { signal, startChild, type Child, type Exit } from './children';
import { type Mount } from './config';
import { EffectReader, effectFile, wallNow } from './effect-log';
import type { ReceiverRecord } from './verdict';

const RECEIVER_SCRIPT = join(__dirname, 'receiver.ts');
const START_TIMEOUT_MS = 30_000;
const CLOSE_TIMEOUT_MS = 30_000;

interface Process {
  readonly child: Child;
  readonly reader: EffectReader;
  killedAt?: number;
  terminatedAt?: number;
  exit?: Exit;
}

/**
 * One receiver slot: a port that a receiver process serves, replaced by a new process (a new pid)
 * each time the test kills or stops the one before.
 */
export class ReceiverSlot {
  private readonly processes: Process[] = [];

  constructor(
    readonly mount: Mount,
    readonly port: number,
    private readonly dir: string,
    private readonly env: Readonly<Record<string, string>>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/webhooks/board`;
  }

  private get current(): Process {
    return this.processes[this.processes.length - 1]!;
  }

  /** Starts a receiver process (plain node with tsx's loader, so the pid is the receiver's own). */
  async start(): Promise<void> {
    const log = openSync(join(this.dir, `receiver-${this.port}.log`), 'a');
    const child = startChild(process.execPath, ['--import', 'tsx', RECEIVER_SCRIPT], {
      stdio: ['ignore', log, log],
      env: { ...process.env, ...this.env, FAULT_MOUNT: this.mount, FAULT_PORT: String(this.port), FAULT_DIR: this.dir },
    });
    closeSync(log);
    this.processes.push({ child, reader: new EffectReader(effectFile(this.dir, child.pid)) });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await canConnect(this.port))) {
      if (child.ended()) throw new Error(`the ${this.mount} receiver (pid ${child.pid}) ended while starting; see ${this.dir}`);
      if (Date.now() > deadline) throw new Error(`the ${this.mount} receiver (pid ${child.pid}) did not listen within ${START_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /**
   * Waits (at most `withinMs`) for a moment with at least `atLeast` handler runs in flight in the
   * current process, preferring one with a run past its side effect and not yet returned (its
   * commit still to come).
   */
  async runsInFlight(withinMs: number, atLeast = 1): Promise<void> {
    const { reader } = this.current;
    const deadline = performance.now() + withinMs;
    for (;;) {
      reader.poll();
      const { beforeEffect, afterEffect } = reader.openCounts();
      const left = deadline - performance.now();
      if ((beforeEffect + afterEffect >= atLeast && (afterEffect > 0 || left < withinMs / 2)) || left <= 0) return;
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  /** kill -9 once runs are in flight (see `runsInFlight`); `start()` brings up a new process. */
  async killWithRunsInFlight(withinMs: number): Promise<void> {
    await this.runsInFlight(withinMs);
    const proc = this.current;
    signal(proc.child, 'SIGKILL');
    // Taken once the signal is sent: nothing the process wrote can be later than this.
    proc.killedAt = wallNow();
    proc.exit = await proc.child.exited;
  }

  /** SIGTERM once runs are in flight (see `runsInFlight`): the process must drain and exit 0. */
  async terminate(withinMs: number, atLeast = 1): Promise<void> {
    await this.runsInFlight(withinMs, atLeast);
    const proc = this.current;
    proc.terminatedAt = wallNow();
    signal(proc.child, 'SIGTERM');
    const timer = setTimeout(() => signal(proc.child, 'SIGKILL'), CLOSE_TIMEOUT_MS);
    proc.exit = await proc.child.exited;
    clearTimeout(timer);
  }

  /** What every process of this slot recorded. */
  records(): ReceiverRecord[] {
    return this.processes.map((p) => {
      p.reader.poll();
      return { pid: p.child.pid, lines: p.reader.lines, killedAt: p.killedAt, terminatedAt: p.terminatedAt, exitCode: p.exit?.code };
    });
  }
}
