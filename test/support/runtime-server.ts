import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { boardEvent, botUpdate, signBoardEvent, signBotUpdate } from '../../src/testing';
import { httpPost } from './http-client';
import { freePort } from './net';
import { CONTRACT_SECRET, describeWebhookContract } from './webhook-contract';

const { webBundleOptions } = require('../../scripts/web-bundle.cjs') as {
  webBundleOptions: (o: { entry: string; outfile: string; format?: 'esm' | 'iife' }) => BuildOptions;
};

const ENTRIES = join(__dirname, '..', 'runtimes', 'entries');

/** A runtime's recipe, bundled and served by a child process on a loopback port. */
export interface RuntimeUnderTest {
  /** `entries/<entry>.ts`, the recipe's entry for this runtime. */
  readonly entry: string;
  /** 'web': the Fetch build (no Node module may be imported); 'node': the Node build, as Deno and Bun resolve the package. */
  readonly build: 'web' | 'node';
  readonly format: 'esm' | 'iife';
  /** The command that serves `bundle` on `port` (in `dir`, where more files may be written). */
  command(bundle: string, port: number, dir: string): { file: string; args: string[]; env?: Record<string, string> };
  /** Whether the runtime has Node's globals (the Fetch build's runtimes have none). */
  readonly nodeGlobals: boolean;
}

/** The Node build as a bundler for Deno or Bun makes it: ESM, Node modules left to the runtime. */
function nodeBundleOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'es2022',
    // Optional peers of Node-only features the recipe does not use.
    external: ['bullmq', 'ioredis', 'pg'],
    // Bundled CommonJS dependencies (pino, raw-body) call require() for Node's modules.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'silent',
  };
}

async function bundle(runtime: RuntimeUnderTest, dir: string): Promise<string> {
  const entry = join(ENTRIES, `${runtime.entry}.ts`);
  const outfile = join(dir, runtime.format === 'esm' ? 'recipe.mjs' : 'recipe.js');
  await build(runtime.build === 'web' ? webBundleOptions({ entry, outfile, format: runtime.format }) : nodeBundleOptions(entry, outfile));
  return outfile;
}

async function waitUntilServing(baseUrl: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the runtime exited with ${child.exitCode}:\n${output()}`);
    try {
      if ((await fetch(`${baseUrl}/handled`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the runtime did not serve within 20 s:\n${output()}`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(child.pid!, 'SIGTERM');
  const killer = setTimeout(() => child.exitCode === null && child.signalCode === null && process.kill(child.pid!, 'SIGKILL'), 5_000);
  await exited;
  clearTimeout(killer);
}

/**
 * The Fetch recipe on one runtime, over HTTP: the webhook contract (a valid delivery 2xx and handled
 * once, its repeat a duplicate, a forged one 401, an oversized one 413) and the standalone
 * verifiers, in a child process started on a free loopback port and stopped by its pid.
 */
export function describeRuntime(name: string, runtime: RuntimeUnderTest): void {
  describe(`the Fetch recipe on ${name}, over HTTP`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-runtime-'));
    let child: ChildProcess | undefined;
    let baseUrl = '';
    let output = '';

    beforeAll(async () => {
      const file = await bundle(runtime, dir);
      const port = await freePort();
      const command = runtime.command(file, port, dir);
      child = spawn(command.file, command.args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...command.env } });
      child.stdout!.on('data', (c) => (output += c));
      child.stderr!.on('data', (c) => (output += c));
      baseUrl = `http://127.0.0.1:${port}`;
      await waitUntilServing(baseUrl, child, () => output);
    }, 60_000);

    afterAll(async () => {
      if (child !== undefined) await stop(child);
      rmSync(dir, { recursive: true, force: true });
    });

    it(runtime.nodeGlobals ? 'runs where Node’s globals exist' : 'runs where there is no process, Buffer or require', async () => {
      const globals = (await (await fetch(`${baseUrl}/globals`)).json()) as Record<string, string>;
      const absent = { process: 'undefined', Buffer: 'undefined', require: 'undefined' };
      if (runtime.nodeGlobals) expect(globals).not.toEqual(absent);
      else expect(globals).toEqual(absent);
    });

    describeWebhookContract(
      () => baseUrl,
      async () => Number(await (await fetch(`${baseUrl}/handled`)).text()),
    );

    describe('the standalone verifiers', () => {
      it('verifyBoardDelivery: a signed event resolves to its delivery; a forged one is 401 signature_mismatch', async () => {
        const event = boardEvent('task.created');
        const signed = signBoardEvent(event, { secret: CONTRACT_SECRET });
        const ok = await httpPost(baseUrl, '/verify/board', signed.headers, signed.body);
        expect([ok.status, ok.json()]).toEqual([200, { deliveryId: event.id }]);
        const forged = signBoardEvent(event, { secret: 'not-the-webhook-secret-0123456789' });
        const refused = await httpPost(baseUrl, '/verify/board', forged.headers, forged.body);
        expect([refused.status, refused.json()]).toEqual([401, { code: 'signature_mismatch' }]);
      });

      it('verifyBotDelivery: a signed update resolves to its delivery; a forged one is 401 signature_mismatch', async () => {
        const update = botUpdate('messageCreate');
        const signed = signBotUpdate(update, { secret: CONTRACT_SECRET });
        const ok = await httpPost(baseUrl, '/verify/bot', signed.headers, signed.body);
        expect([ok.status, ok.json()]).toEqual([200, { deliveryId: update.id }]);
        const forged = signBotUpdate(update, { secret: 'not-the-webhook-secret-0123456789' });
        const refused = await httpPost(baseUrl, '/verify/bot', forged.headers, forged.body);
        expect([refused.status, refused.json()]).toEqual([401, { code: 'signature_mismatch' }]);
      });

      it('verifyBoardDelivery: a body over the limit is 413 body_too_large', async () => {
        const event = boardEvent('task.created');
        event.task.description = 'x'.repeat(600 * 1024);
        const signed = signBoardEvent(event, { secret: CONTRACT_SECRET });
        const refused = await httpPost(baseUrl, '/verify/board', signed.headers, signed.body);
        expect([refused.status, refused.json()]).toEqual([413, { code: 'body_too_large' }]);
      });
    });

    it('logs each delivery to the runtime’s output, without the secret', async () => {
      // The default logger writes in batches, at least every 250 ms.
      for (let waited = 0; waited < 3_000 && !/"msg":"delivery received"/.test(output); waited += 50) await new Promise((r) => setTimeout(r, 50));
      expect(output).toMatch(/"msg":"delivery received"/);
      expect(output).not.toContain(CONTRACT_SECRET);
    });

    it(
      runtime.nodeGlobals
        ? 'logs no per-isolate warning: the default memory store is the process’s'
        : 'warns once, at setup, that the default memory store de-duplicates per isolate',
      () => {
        // The webhook was made before the first delivery above, and its lines are written by now.
        const warnings = output.match(/"dedup":"per_isolate"/g) ?? [];
        expect(warnings).toHaveLength(runtime.nodeGlobals ? 0 : 1);
      },
    );
  });
}
