import { closeSync, openSync, readSync, writeSync } from 'node:fs';

/**
 * The record of what handlers did, one file per receiver process, kept outside that process: each
 * line is written with a synchronous write(2), so once the handler goes on, the line is in the
 * kernel and a kill -9 of the receiver cannot lose it. (fsync would guard against losing the
 * machine, which this test does not do.)
 *
 * Lines: `<mark> <delivery id> <time>`, the time in ms on a clock every process shares.
 */
export type Mark =
  | 'S' // a handler run started
  | 'E' // its side effect is done
  | 'F' // it failed before its side effect (an injected failure, or its transaction could not start)
  | 'X' // it failed after its side effect, which its transaction rolled back: nothing of it persisted
  | 'R'; // it returned: the receiver commits next

/** Wall-clock ms with sub-ms resolution, comparable across the processes of one machine. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

export function effectFile(dir: string, pid: number): string {
  return `${dir}/effects-${pid}.log`;
}

export class EffectWriter {
  private readonly fd: number;

  constructor(file: string) {
    this.fd = openSync(file, 'a');
  }

  write(mark: Mark, id: string): void {
    writeSync(this.fd, `${mark} ${id} ${wallNow().toFixed(3)}\n`);
  }
}

export interface EffectLine {
  readonly mark: Mark;
  readonly id: string;
  readonly at: number;
}

/** Reads a receiver's effect file as it grows; remembers the runs now open in it. */
export class EffectReader {
  private offset = 0;
  private rest = '';
  readonly lines: EffectLine[] = [];
  /** Runs started and not yet returned or failed: 'S' before the side effect, 'E' after it. */
  readonly open = new Map<string, 'S' | 'E'>();

  constructor(private readonly file: string) {}

  /** Reads what was appended since the last call. */
  poll(): void {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return; // the receiver has not written yet
    }
    try {
      const buffer = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buffer, 0, buffer.length, this.offset);
        if (n === 0) break;
        this.offset += n;
        this.rest += buffer.toString('latin1', 0, n);
      }
    } finally {
      closeSync(fd);
    }
    const complete = this.rest.lastIndexOf('\n');
    if (complete < 0) return;
    for (const text of this.rest.slice(0, complete).split('\n')) {
      const [mark, id, at] = text.split(' ') as [Mark, string, string];
      this.lines.push({ mark, id, at: Number(at) });
      if (mark === 'S' || mark === 'E') this.open.set(id, mark);
      else this.open.delete(id);
    }
    this.rest = this.rest.slice(complete + 1);
  }

  /** How many open runs are before and after their side effect. */
  openCounts(): { beforeEffect: number; afterEffect: number } {
    let beforeEffect = 0;
    let afterEffect = 0;
    for (const state of this.open.values()) {
      if (state === 'S') beforeEffect++;
      else afterEffect++;
    }
    return { beforeEffect, afterEffect };
  }
}
