/** What the figures were measured on: they mean little without it. */
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { pinned } from './ipc';
import { ROOT } from './paths';

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly kernel: string;
  readonly pinned: boolean;
  readonly packages: Record<string, string>;
}

function cpuModel(): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    return match ? match[1]!.trim() : 'unknown';
  } catch {
    return 'unknown (no /proc/cpuinfo)';
  }
}

function version(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

export function describeMachine(): Machine {
  return {
    cpu: cpuModel(),
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kernel: release(),
    pinned,
    packages: Object.fromEntries(['express', '@octokit/webhooks', 'standardwebhooks', 'autocannon', 'pino', 'ajv'].map((n) => [n, version(n)])),
  };
}

/** The 1-minute load average: other work on the machine shows here. */
export function loadAverage(): number {
  return loadavg()[0]!;
}
