import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { boardEvent, botUpdate } from '../../src/testing';
import { signBoardEvent, signBotUpdate } from '../../src/testing/sign-delivery';
import { LAUNCHER, ROOT, runCli } from '../cli/run-cli';

/**
 * The relay test's processes: the relay, the listeners (both `node bin/svc-webhooks.js` from the
 * source) and the developers' receivers (receiver-child.ts), each a child known by its pid, its
 * output collected, ended by its pid.
 */

export interface Proc {
  readonly pid: number;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number | null>;
  ended: boolean;
}

const running = new Set<Proc>();

function start(args: readonly string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', SVC_WEBHOOKS_CLI_SOURCE: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start ${args.join(' ')}`);
  const proc: Proc = {
    pid: child.pid,
    stdout: '',
    stderr: '',
    ended: false,
    exited: new Promise((resolve) =>
      child.once('exit', (code) => {
        proc.ended = true;
        running.delete(proc);
        resolve(code);
      }),
    ),
  };
  child.stdout.on('data', (c: Buffer) => (proc.stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (proc.stderr += c.toString('utf8')));
  running.add(proc);
  return proc;
}

/** The CLI, as a user runs it. */
export function cli(args: readonly string[], env: Record<string, string> = {}): Proc {
  return start([LAUNCHER, ...args], env);
}

/** What a `listen` process is given: the relay, the local receiver's port, its token and cursor files, its development secret. */
export interface ListenerSetup {
  readonly relayUrl: string;
  readonly port: number;
  readonly tokenFile: string;
  readonly cursorFile: string;
  readonly env: Record<string, string>;
  readonly extra?: readonly string[];
}

/** `svc-webhooks listen` forwarding to a receiver on 127.0.0.1. */
export function listenProcess(setup: ListenerSetup): Proc {
  const target = `http://127.0.0.1:${setup.port}`;
  return cli(
    ['listen', '--relay', setup.relayUrl, '--to', target, '--token-file', setup.tokenFile, '--cursor-file', setup.cursorFile, ...(setup.extra ?? [])],
    setup.env,
  );
}

/** A developer's receiver with its own development secret; `quiet`: it prints ids, not bodies. */
export function receiver(secret: string, options: { fail?: boolean; port?: number; quiet?: boolean } = {}): Proc {
  return start(['--require', 'tsx/cjs', join(__dirname, 'receiver-child.ts')], {
    RECEIVER_SECRET: secret,
    RECEIVER_FAIL: options.fail ? '1' : '0',
    RECEIVER_QUIET: options.quiet ? '1' : '0',
    PORT: String(options.port ?? 0),
  });
}

export function signal(proc: Proc, sig: NodeJS.Signals): void {
  if (!proc.ended) process.kill(proc.pid, sig);
}

export async function end(proc: Proc): Promise<void> {
  signal(proc, 'SIGCONT');
  signal(proc, 'SIGKILL');
  await proc.exited;
}

/** Ends every process still running, by its pid. */
export async function endAll(): Promise<void> {
  await Promise.all([...running].map(end));
}

export async function waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

/** The port a process printed (`relay listening on http://127.0.0.1:PORT`, `listening PORT`). */
export function portOf(proc: Proc, pattern: RegExp): Promise<number> {
  return waitFor(`a port from pid ${proc.pid} (${proc.stdout}${proc.stderr})`, () => {
    const m = pattern.exec(proc.stdout);
    return m === null ? undefined : Number(m[1]);
  });
}

export const RELAY_PORT = /relay listening on http:\/\/127\.0\.0\.1:(\d+)/;
export const RECEIVER_PORT = /listening (\d+)/;

/** What a receiver accepted: one entry per delivery, with the body's bytes and whether it was a duplicate. */
export function accepted(proc: Proc): Array<{ id: string; body: Buffer; duplicate: boolean; path: string }> {
  return proc.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { id: string; body: string; duplicate: boolean; path: string })
    .map((r) => ({ id: r.id, body: Buffer.from(r.body, 'base64'), duplicate: r.duplicate, path: r.path }));
}

export interface Sent {
  readonly id: string;
  readonly body: string;
  readonly status: number;
  /** The relay's sequence number, when it stored the delivery. */
  readonly seq?: number;
}

async function post(url: string, signed: { headers: Record<string, string>; body: string }): Promise<Sent> {
  const res = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
  const answer = (await res.json().catch(() => ({}))) as { seq?: number };
  return { id: signed.headers['X-Svc-Delivery']!, body: signed.body, status: res.status, ...(answer.seq === undefined ? {} : { seq: answer.seq }) };
}

/** POSTs one board event signed with `secret` (or a bot update), as svc does. */
export function sendBoard(url: string, secret: string, title = 'relay test'): Promise<Sent> {
  return sendBoardEvent(url, secret, { title });
}

/** A board event of `type` on board `boardId` (the fixture's board by default). */
export function sendBoardEvent(
  url: string,
  secret: string,
  event: { type?: 'task.created' | 'task.updated'; boardId?: string; title?: string },
): Promise<Sent> {
  const title = event.title ?? 'relay test';
  const board = event.boardId === undefined ? {} : { board: { id: event.boardId } };
  const payload =
    event.type === 'task.updated' ? boardEvent('task.updated', { task: { title }, ...board }) : boardEvent('task.created', { task: { title }, ...board });
  return post(`${url}/webhooks/board`, signBoardEvent(payload, { secret }));
}

/** A bot update signed with `secret`, to the one bot path, or to `/webhooks/bots/<botId>` as the bot `botId`. */
export function sendBot(url: string, secret: string, botId?: string): Promise<Sent> {
  const signed = signBotUpdate(botUpdate('messageCreate', undefined, botId === undefined ? undefined : { botUserId: botId }), { secret });
  return post(botId === undefined ? `${url}/webhooks/bot` : `${url}/webhooks/bots/${botId}`, signed);
}

/** A temporary directory with files; `cleanup` removes it. */
export function workDir(files: Record<string, string> = {}): { dir: string; path: (name: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-relay-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return { dir, path: (name) => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The token `relay token create` printed: its last line. */
export async function createToken(name: string, backend: readonly string[]): Promise<string> {
  const result = await runCli(['relay', 'token', 'create', name, ...backend]);
  if (result.code !== 0) throw new Error(`relay token create failed: ${result.stderr}`);
  return result.stdout.trim().split('\n').pop()!;
}
