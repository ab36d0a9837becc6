import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** `examples/bot-server.ts` (what `npm start` runs), started as a child process with a group of its own. */
export interface ExampleServer {
  readonly child: ChildProcess;
  /** The URL of its "listening" log line. */
  readonly base: string;
  /** All it printed so far, stdout and stderr. */
  output(): string;
  /** Ends the group (tsx and the node it runs) by the server's pid, and waits for the server to exit. */
  stop(): Promise<void>;
}

/**
 * Starts the example server on a free port, on the development secrets unless `env` sets them, and
 * resolves once it has logged that it listens and printed its commands whole (the last is the board ping's).
 */
export function startExampleServer(env: Record<string, string> = {}, timeoutMs = 30_000, args: readonly string[] = []): Promise<ExampleServer> {
  const child = spawn(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'examples/bot-server.ts', ...args], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, PORT: '0', SVC_BOT_WEBHOOK_SECRET: '', SVC_BOARD_WEBHOOK_SECRET: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server = (base: string): ExampleServer => ({
    child,
    base,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
      await exited;
    },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(check);
      void server('').stop();
      reject(new Error(`the example server did not start in ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const check = setInterval(() => {
      const listening = out.split('\n').find((l) => l.includes('"msg":"listening"'));
      // The board ping's command is the last line of the hints, printed whole: a chunk of the pipe
      // may end inside it, so wait for its end (and the newline after it).
      if (listening === undefined || !/^id=.*--data-binary "\$body"\n/m.test(out)) return;
      clearInterval(check);
      clearTimeout(timer);
      resolve(server(JSON.parse(listening).url as string));
    }, 25);
    child.once('exit', (code) => {
      clearInterval(check);
      clearTimeout(timer);
      reject(new Error(`the example server exited (${code}) before it was ready:\n${out}`));
    });
  });
}
