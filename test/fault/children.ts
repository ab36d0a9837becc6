import { spawn, type SpawnOptions } from 'node:child_process';

/** How a child process ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A child process known by its pid, and the promise of its end. */
export interface Child {
  readonly pid: number;
  readonly exited: Promise<Exit>;
  /** Whether the process has ended. */
  readonly ended: () => boolean;
}

const running = new Map<number, Child>();

/**
 * Every child of the fault test goes through here, so that each is signalled by its pid and none
 * outlives the test: `endAll()` (and, as a last resort, the parent's own exit) kills what is left.
 */
export function startChild(command: string, args: readonly string[], options: SpawnOptions): Child {
  const proc = spawn(command, args, options);
  if (proc.pid === undefined) throw new Error(`could not start ${command}`);
  const pid = proc.pid;
  let done = false;
  const exited = new Promise<Exit>((resolve) =>
    proc.once('exit', (code, signal) => {
      done = true;
      running.delete(pid);
      resolve({ code, signal });
    }),
  );
  const child: Child = { pid, exited, ended: () => done };
  running.set(pid, child);
  return child;
}

/** Sends `signal` to a running child by its pid; a child that has already ended is left alone. */
export function signal(child: Child, sig: NodeJS.Signals): void {
  if (!child.ended()) process.kill(child.pid, sig);
}

/** SIGKILLs the child and waits for its end. */
export async function kill(child: Child): Promise<Exit> {
  signal(child, 'SIGKILL');
  return child.exited;
}

/** Ends every child still running: a stopped one is continued first so that it can die. */
export async function endAll(): Promise<void> {
  const left = [...running.values()];
  for (const child of left) {
    signal(child, 'SIGCONT');
    signal(child, 'SIGKILL');
  }
  await Promise.all(left.map((c) => c.exited));
}

// The parent may end abruptly (an exception, Ctrl-C): its children go with it.
process.once('exit', () => {
  for (const pid of running.keys()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});
