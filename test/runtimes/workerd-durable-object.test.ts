/**
 * "Handled once" across isolates on Cloudflare Workers: workerd runs two Workers (two isolates)
 * bound to one Durable Object namespace of `SvcDedupObject`, with storage on disk; every copy of
 * every delivery is sent at once, spread over both.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { boardEvent, signBoardEvent, type SignedDelivery } from '../../src/testing';
import { CONTRACT_SECRET } from '../support/contract-secret';
import { freePort } from '../support/net';

const { webBundleOptions } = require('../../scripts/web-bundle.cjs') as {
  webBundleOptions: (o: { entry: string; outfile: string; format?: 'esm' | 'iife' }) => BuildOptions;
};

const WORKERD = require.resolve('@cloudflare/workerd-linux-64/bin/workerd');
const COMPATIBILITY_DATE = execFileSync(WORKERD, ['--version'], { encoding: 'utf8' }).trim().split(' ').pop()!;

/** Worker `a` defines the namespace; worker `b` binds a's; each is served on its own socket. */
function config(ports: readonly [number, number], storage: string): string {
  const worker = (namespace: string) => `(
  modules = [ (name = "worker", esModule = embed "worker.mjs") ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  compatibilityFlags = ["no_nodejs_compat", "no_nodejs_compat_v2"],
  bindings = [ (name = "SVC_DEDUP", durableObjectNamespace = ${namespace}) ],
  ${namespace === '"SvcDedupObject"' ? 'durableObjectNamespaces = [ (className = "SvcDedupObject", uniqueKey = "svc-webhooks-dedup-test") ],\n  durableObjectStorage = (localDisk = "storage"),' : ''}
)`;
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "a", worker = ${worker('"SvcDedupObject"')}),
    (name = "b", worker = ${worker('(serviceName = "a", className = "SvcDedupObject")')}),
    (name = "storage", disk = (path = "${storage}", writable = true)),
  ],
  sockets = [
    (name = "a", address = "127.0.0.1:${ports[0]}", http = (), service = "a"),
    (name = "b", address = "127.0.0.1:${ports[1]}", http = (), service = "b"),
  ],
);
`;
}

describe(`the Durable Object store on workerd ${COMPATIBILITY_DATE}, across two Workers`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-workerd-do-'));
  let child: ChildProcess | undefined;
  let output = '';
  let urls: string[] = [];

  beforeAll(async () => {
    await build(webBundleOptions({ entry: join(__dirname, 'entries', 'workerd-durable-object.ts'), outfile: join(dir, 'worker.mjs'), format: 'esm' }));
    mkdirSync(join(dir, 'storage'));
    const ports = [await freePort(), await freePort()] as const;
    writeFileSync(join(dir, 'config.capnp'), config(ports, join(dir, 'storage')));
    child = spawn(WORKERD, ['serve', join(dir, 'config.capnp'), '--experimental'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (c) => (output += c));
    child.stderr!.on('data', (c) => (output += c));
    urls = ports.map((port) => `http://127.0.0.1:${port}`);
    for (const url of urls) {
      for (let waited = 0; ; waited += 100) {
        if (child.exitCode !== null) throw new Error(`workerd exited with ${child.exitCode}:\n${output}`);
        try {
          if ((await fetch(`${url}/handled`)).ok) break;
        } catch {
          if (waited > 20_000) throw new Error(`workerd did not serve within 20 s:\n${output}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }, 60_000);

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      process.kill(child.pid!, 'SIGTERM');
      const killer = setTimeout(() => child!.exitCode === null && child!.signalCode === null && process.kill(child!.pid!, 'SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs each of 50 deliveries’ handlers exactly once when each is sent 3 times at once', async () => {
    const deliveries: SignedDelivery[] = Array.from({ length: 50 }, () => signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET }));
    // As svc does: an answer that is not 2xx (409 while another copy runs) is sent again later.
    const send = async (signed: SignedDelivery, url: string): Promise<unknown> => {
      for (let attempt = 1; ; attempt++) {
        const res = await fetch(`${url}/webhooks/board`, { method: 'POST', headers: signed.headers, body: signed.body });
        const answer = (await res.json()) as unknown;
        if (res.status === 200 || attempt === 30) return answer;
        expect(res.status).toBe(409);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const answers = await Promise.all(deliveries.flatMap((signed, d) => [0, 1, 2].map((i) => send(signed, urls[(d + i) % 2]!))));
    const handled = await Promise.all(urls.map(async (url) => Number(await (await fetch(`${url}/handled`)).text())));
    // Every delivery reached both Workers: 50 runs in all, not one per Worker and delivery, is the
    // claims shared between them. (Which Worker wins a delivery's race is up to timing.)
    expect(handled[0]! + handled[1]!).toBe(50);
    expect(answers.filter((a) => JSON.stringify(a) === '{"ok":true}')).toHaveLength(50);
    expect(answers.filter((a) => JSON.stringify(a) === '{"ok":true,"duplicate":true}')).toHaveLength(100);
  }, 120_000);

  it('answers a copy sent after the first was handled as a duplicate, from either Worker', async () => {
    const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
    const first = await fetch(`${urls[0]}/webhooks/board`, { method: 'POST', headers: signed.headers, body: signed.body });
    expect(await first.json()).toEqual({ ok: true });
    const again = await fetch(`${urls[1]}/webhooks/board`, { method: 'POST', headers: signed.headers, body: signed.body });
    expect(await again.json()).toEqual({ ok: true, duplicate: true });
  });
});
