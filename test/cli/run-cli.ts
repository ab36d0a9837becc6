import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { CliIo } from '../../src/cli/cli-io';
import { main } from '../../src/cli/main';

export const ROOT = resolve(__dirname, '..', '..');
export const LAUNCHER = join(ROOT, 'bin', 'svc-webhooks.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The waits the CLI asked for, in ms (in-process runs only). */
  sleeps: number[];
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  fetch?: typeof fetch;
  /** `status --watch` stops when this resolves. */
  interrupted?: () => Promise<void>;
  /** The standard input (in-process runs only); absent, the CLI runs as with no terminal. */
  stdin?: CliIo['stdin'];
}

/** Runs the CLI in this process, with captured output and waits that return at once. */
export async function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const sleeps: number[] = [];
  const io: CliIo = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: options.env ?? {},
    cwd: options.cwd ?? ROOT,
    interactive: false,
    fetch: options.fetch ?? globalThis.fetch,
    sleep: async (ms) => void sleeps.push(ms),
    ...(options.interrupted === undefined ? {} : { interrupted: options.interrupted }),
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
  };
  const code = await main(args, io);
  return { code, stdout, stderr, sleeps };
}

/**
 * Runs the real launcher, `node bin/svc-webhooks.js`, from the source (a stale build in dist/
 * must not decide the result). Asynchronous, so servers in this process keep answering.
 */
export function spawnCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', SVC_WEBHOOKS_CLI_SOURCE: '1' };
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  return new Promise((done) => {
    execFile(process.execPath, [LAUNCHER, ...args], { cwd: options.cwd ?? ROOT, env, timeout: 15_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      done({ code, stdout, stderr, sleeps: [] });
    });
  });
}

/** A temporary directory with the given files; removed by the returned cleanup. */
export function tempFiles(files: Record<string, string | Buffer>): { dir: string; path: (name: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-cli-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return { dir, path: (name) => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Errors are one line on stderr. */
export function expectOneLine(text: string): void {
  expect(text.endsWith('\n')).toBe(true);
  expect(text.trimEnd().split('\n')).toHaveLength(1);
}
