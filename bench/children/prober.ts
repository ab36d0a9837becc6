/**
 * The startup prober: spawns a startup child (pinned to the other core), waits for the line it
 * writes when it listens, and sends it a fresh signed delivery, until one is answered 2xx. It runs
 * in its own pinned process and never polls, so it takes no CPU from the process being started.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { bodyTemplate } from '../bodies';
import { childEnv, nodeCommand, serveRequests, type Message } from '../ipc';
import { childScript } from '../paths';
import { deliveries } from '../signing';

export interface StartOnce {
  /** From spawn() to the first 2xx answer received here, in ms. */
  readonly ms: number;
  /** The child's own marks, in ms since its process started. */
  readonly marks: Record<string, number>;
}

const GIVE_UP_MS = 10_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** Resolves with the status of one fresh delivery, or 0 when nothing listens yet. */
function attempt(port: number, path: string, next: ReturnType<typeof deliveries>): Promise<number> {
  const delivery = next();
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { ...delivery.headers, 'Content-Length': delivery.body.length } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(delivery.body);
  });
}

async function startOnce(message: Message): Promise<StartOnce> {
  const { name, module, arg, path } = message as unknown as { name: string; module: string; arg: string; path: string };
  const port = await freePort();
  const next = deliveries('svc-board', bodyTemplate('board', '2kb'));
  const { command, args } = nodeCommand(0, [childScript('children/startup'), module, arg, String(port)]);
  const started = performance.now();
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env: childEnv() });
  let stderr = '';
  let onListening: () => void = () => undefined;
  const listening = new Promise<void>((resolve) => (onListening = resolve));
  const marks = new Promise<Record<string, number>>((resolve) => {
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.includes('LISTENING\n')) onListening();
      const line = /^BENCH (.*)$/m.exec(stderr);
      if (line) resolve(JSON.parse(line[1]!) as Record<string, number>);
    });
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', () => reject(new Error(`${name} exited during startup: ${stderr}`))));
  const timer = setTimeout(() => child.kill('SIGKILL'), GIVE_UP_MS);
  try {
    await Promise.race([listening, exited]);
    for (;;) {
      const status = await attempt(port, path, next);
      if (status >= 200 && status < 300) break;
      if (status !== 0) throw new Error(`${name} answered ${status} at startup`);
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited during startup: ${stderr}`);
      await new Promise((r) => setTimeout(r, 1));
    }
    const ms = performance.now() - started;
    return { ms, marks: await Promise.race([marks, exited]) };
  } finally {
    clearTimeout(timer);
    exited.catch(() => undefined);
    child.kill('SIGKILL');
  }
}

serveRequests({ start: startOnce });
