/**
 * How often the machine itself keeps a process from running: one stall probe
 * (children/stalls.ts) per core, both at once, with nothing else of the bench running. A tail
 * figure such as a p99 time to 2xx cannot be lower than what these stalls add to the deliveries
 * they meet, whatever the code under test does.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { childEnv, nodeCommand, pinned } from './ipc';
import { childScript } from './paths';

const run = promisify(execFile);

export interface CoreStalls {
  /** The core the probe was pinned to, or undefined where pinning is not possible. */
  readonly core: 0 | 1 | undefined;
  readonly seconds: number;
  /** The bounds, ms, that `over` counts gaps above. */
  readonly bounds: readonly number[];
  /** How many times the probe was kept from running for longer than each bound. */
  readonly over: readonly number[];
  readonly longestMs: number;
}

async function probe(core: 0 | 1 | undefined, seconds: number): Promise<CoreStalls> {
  const script = [childScript('children/stalls'), String(seconds)];
  const { command, args } = core === undefined ? { command: process.execPath, args: script } : nodeCommand(core, script);
  const { stdout } = await run(command, args, { env: childEnv(), timeout: (seconds + 30) * 1000 });
  return { core, ...(JSON.parse(stdout) as Omit<CoreStalls, 'core'>) };
}

export function measureStalls(seconds: number): Promise<CoreStalls[]> {
  return Promise.all(pinned ? [probe(0, seconds), probe(1, seconds)] : [probe(undefined, seconds), probe(undefined, seconds)]);
}

/** `on core 0: 45 times over 1 ms, 21 over 2 ms, 4 over 4 ms, the longest 4.72 ms; on core 1: …`. */
export function describeStalls(stalls: readonly CoreStalls[]): string {
  return stalls
    .map((s, i) => {
      const over = (bound: number) => s.over[s.bounds.indexOf(bound)] ?? 0;
      const where = s.core === undefined ? `probe ${i + 1} (unpinned)` : `on core ${s.core}`;
      return `${where}: ${over(1)} times over 1 ms, ${over(2)} over 2 ms, ${over(4)} over 4 ms, the longest ${s.longestMs.toFixed(2)} ms`;
    })
    .join('; ');
}
