/**
 * Startup: the time from spawning a process to its first 2xx answer to a signed delivery, with the
 * steps inside the child (node's own boot, loading modules, building the middleware, listening).
 * A prober child on the other core starts each process and polls it (bench/children/prober.ts).
 */
import type { StartOnce } from './children/prober';
import { Child } from './ipc';
import { childScript } from './paths';
import { median } from './stats';

export interface StartupStack {
  readonly name: string;
  readonly label: string;
  readonly module: string;
  readonly arg?: 'board';
  readonly path: string;
}

export const STARTUP_STACKS: readonly StartupStack[] = [
  // svc-webhooks as installed from its packed tarball (bench/package.ts): the build users run.
  { name: 'svc-board-express', label: 'svc-webhooks board, Express 5 (installed package)', module: 'pkg-express', path: '/webhooks/board' },
  { name: 'svc-board-node', label: 'svc-webhooks board, node:http (installed package)', module: 'pkg-node', path: '/webhooks/board' },
  { name: 'express-floor', label: 'Express floor', module: 'express-floor', path: '/webhooks/board' },
  { name: 'node-floor', label: 'node floor', module: 'node-floor', path: '/webhooks/board' },
];

export interface StartupResult {
  readonly stack: string;
  readonly label: string;
  /** Medians over runs, in ms. */
  readonly spawnToFirst2xxMs: number;
  /** Inside the child, ms since its process started: node ready, Express loaded, modules loaded, middleware built, listening, first 2xx sent. */
  readonly marks: Record<string, number>;
  readonly runs: number;
}

const TIMEOUT_MS = 20_000;

export async function measureStartup(runs: number): Promise<StartupResult[]> {
  const prober = Child.start('startup prober', childScript('children/prober'), { core: 1 });
  try {
    return await measureWith(prober, runs);
  } finally {
    await prober.stop();
  }
}

/** Starts take turns stack by stack (A B C D, A B C D ...), like the load rounds. */
async function measureWith(prober: Child, runs: number): Promise<StartupResult[]> {
  const times = new Map<string, number[]>(STARTUP_STACKS.map((s) => [s.name, []]));
  const marks = new Map<string, Array<Record<string, number>>>(STARTUP_STACKS.map((s) => [s.name, []]));
  for (let i = 0; i < runs; i++) {
    for (const stack of STARTUP_STACKS) {
      const once = await prober.request<StartOnce>(
        { type: 'start', name: stack.name, module: stack.module, arg: stack.arg ?? '-', path: stack.path },
        TIMEOUT_MS,
      );
      times.get(stack.name)!.push(once.ms);
      marks.get(stack.name)!.push(once.marks);
    }
  }
  return STARTUP_STACKS.map((stack) => {
    const all = marks.get(stack.name)!;
    const keys = Object.keys(all[0]!);
    return {
      stack: stack.name,
      label: stack.label,
      spawnToFirst2xxMs: median(times.get(stack.name)!),
      marks: Object.fromEntries(keys.map((k) => [k, median(all.map((m) => m[k]!))])),
      runs,
    };
  });
}
