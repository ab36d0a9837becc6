import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { CONTRACT_SECRET, describeWebhookContract } from '../support/webhook-contract';

// workerd, the runtime Cloudflare Workers run on, as the npm package of its Linux x64 binary (the
// machines this project runs on); its version is the latest compatibility date it supports.
const WORKERD = require.resolve('@cloudflare/workerd-linux-64/bin/workerd');
const COMPATIBILITY_DATE = execFileSync(WORKERD, ['--version'], { encoding: 'utf8' }).trim().split(' ').pop()!;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

/** The bundle as Wrangler would make it: ESM, Node built-ins left to the runtime's Node compatibility. */
async function bundle(dir: string): Promise<void> {
  await build({
    entryPoints: [join(__dirname, 'worker-entry.ts')],
    outfile: join(dir, 'worker.mjs'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'es2022',
    // Bundled CommonJS dependencies (pino) call require() for built-ins.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire('/worker.mjs');" },
    logLevel: 'silent',
  });
}

function config(port: number): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "worker.mjs") ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  compatibilityFlags = ["nodejs_compat"],
  bindings = [ (name = "SVC_BOARD_WEBHOOK_SECRET", text = "${CONTRACT_SECRET}") ],
);
`;
}

async function waitUntilServing(baseUrl: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`workerd exited with ${child.exitCode}:\n${output()}`);
    try {
      if ((await fetch(`${baseUrl}/handled`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`workerd did not start within 15 s:\n${output()}`);
}

describe('the Cloudflare Workers recipe (createWebHandler), in workerd with nodejs_compat, over HTTP', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-workerd-'));
  let child: ChildProcess;
  let baseUrl = '';
  let output = '';

  beforeAll(async () => {
    await bundle(dir);
    const port = await freePort();
    writeFileSync(join(dir, 'config.capnp'), config(port));
    child = spawn(WORKERD, ['serve', join(dir, 'config.capnp')], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (c) => (output += c));
    child.stderr!.on('data', (c) => (output += c));
    baseUrl = `http://127.0.0.1:${port}`;
    await waitUntilServing(baseUrl, child, () => output);
  }, 30_000);

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(child.pid!, 'SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  // The handler runs inside workerd: its count is read back from the worker.
  describeWebhookContract(
    () => baseUrl,
    async () => Number(await (await fetch(`${baseUrl}/handled`)).text()),
  );

  it('logs each delivery with pino to the runtime’s stdout', () => {
    expect(output).toMatch(/"msg":"delivery received"/);
    expect(output).not.toContain(CONTRACT_SECRET);
  });
});
