/**
 * Child processes and their IPC: the parent sends a typed request and awaits the one reply with the
 * same id. Children run the compiled JavaScript on plain `node` (no tsx loader in their CPU, memory
 * or startup figures), pinned to one core each when `taskset` is there, so the server and the load
 * generator do not take each other's core.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';

export interface Message {
  readonly type: string;
  readonly [key: string]: unknown;
}

interface Envelope {
  readonly id: number;
  readonly error?: string;
  readonly reply?: unknown;
}

const CAN_PIN = availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/**
 * The children's environment: NODE_OPTIONS would change what is measured, and NODE_EXTRA_CA_CERTS
 * makes node read a CA bundle before it starts (60 ms in this sandbox), which a loopback HTTP
 * server never uses.
 */
export function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** The runtimes a child runs on: node, or Bun (the `bun` dev dependency's binary) for the Bun.serve stacks. */
export type Runtime = 'node' | 'bun';

function runtimePath(runtime: Runtime): string {
  return runtime === 'node' ? process.execPath : require.resolve('@oven/bun-linux-x64/bin/bun');
}

/** The command that starts `node` (or Bun) on one core (or unpinned where that is not possible). */
export function nodeCommand(core: 0 | 1, nodeArgs: string[], runtime: Runtime = 'node'): { command: string; args: string[] } {
  const file = runtimePath(runtime);
  return CAN_PIN ? { command: 'taskset', args: ['-c', String(core), file, ...nodeArgs] } : { command: file, args: nodeArgs };
}

export const pinned = CAN_PIN;

export interface SpawnOptions {
  readonly core: 0 | 1;
  readonly nodeFlags?: string[];
  readonly args?: string[];
  readonly runtime?: Runtime;
}

export class Child {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private exited = false;

  private constructor(
    readonly name: string,
    private readonly proc: ChildProcess,
  ) {
    proc.on('message', (envelope: Envelope) => this.settle(envelope));
    proc.on('exit', (code, signal) => {
      this.exited = true;
      for (const [id] of this.pending) this.settle({ id, error: `${name} exited (code ${code}, signal ${signal})` });
    });
  }

  /** Starts a compiled bench script; its stdout goes to /dev/null (where a server's logs go), stderr is shown. */
  static start(name: string, script: string, options: SpawnOptions): Child {
    const { command, args } = nodeCommand(options.core, [...(options.nodeFlags ?? []), script, ...(options.args ?? [])], options.runtime);
    const proc = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: childEnv() });
    return new Child(name, proc);
  }

  /** Sends `message` and resolves with the child's reply; rejects after `timeoutMs`. */
  request<T>(message: Message, timeoutMs: number): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`${this.name} is not running`));
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => this.settle({ id, error: `${this.name} did not answer ${message.type} within ${timeoutMs} ms` }), timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.proc.send({ id, message });
    });
  }

  /** Asks the child to exit and kills it if it has not within a second. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
    if (this.proc.connected) this.proc.disconnect();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 1000);
    await exited;
    clearTimeout(timer);
  }

  private settle(envelope: Envelope): void {
    const waiter = this.pending.get(envelope.id);
    if (waiter === undefined) return;
    this.pending.delete(envelope.id);
    clearTimeout(waiter.timer);
    if (envelope.error !== undefined) waiter.reject(new Error(envelope.error));
    else waiter.resolve(envelope.reply);
  }
}

/**
 * The child side: answers each request with its handler's result, and exits when the parent
 * disconnects, so a child never outlives the bench.
 */
export function serveRequests(handlers: Record<string, (message: Message) => unknown>): void {
  process.on('message', ({ id, message }: { id: number; message: Message }) => {
    const handler = handlers[message.type];
    Promise.resolve()
      .then(() => {
        if (handler === undefined) throw new Error(`unknown request ${message.type}`);
        return handler(message);
      })
      .then(
        (reply) => process.send!({ id, reply }),
        (err: unknown) => process.send!({ id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      );
  });
  process.on('disconnect', () => process.exit(0));
}
