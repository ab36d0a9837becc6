/**
 * "Handled once" across isolates on Vercel's Edge runtime: two edge-runtime processes (two isolates)
 * serve one Edge function whose store is the Redis REST store, over a real redis-server behind a
 * REST front; every copy of every delivery is sent at once, half to each.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { boardEvent, signBoardEvent, type SignedDelivery } from '../../src/testing';
import { CONTRACT_SECRET } from '../support/contract-secret';
import { freePort } from '../support/net';
import { RedisRestFront } from '../support/redis-rest-front';
import { RedisServer } from '../support/redis-server';

const { webBundleOptions } = require('../../scripts/web-bundle.cjs') as {
  webBundleOptions: (o: { entry: string; outfile: string; format?: 'esm' | 'iife' }) => BuildOptions;
};

const TOKEN = 'edge-rest-token-0123456789abcdef';

interface Isolate {
  readonly child: ChildProcess;
  readonly url: string;
  output: string;
}

async function serve(bundle: string): Promise<Isolate> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(__dirname, 'serve-edge-runtime.cjs'), bundle, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const isolate: Isolate = { child, url: `http://127.0.0.1:${port}`, output: '' };
  child.stdout!.on('data', (c) => (isolate.output += c));
  child.stderr!.on('data', (c) => (isolate.output += c));
  for (let waited = 0; ; waited += 100) {
    if (child.exitCode !== null) throw new Error(`edge-runtime exited with ${child.exitCode}:\n${isolate.output}`);
    try {
      if ((await fetch(`${isolate.url}/handled`)).ok) return isolate;
    } catch {
      if (waited > 20_000) throw new Error(`edge-runtime did not serve within 20 s:\n${isolate.output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(child.pid!, 'SIGTERM');
  const killer = setTimeout(() => child.exitCode === null && child.signalCode === null && process.kill(child.pid!, 'SIGKILL'), 5_000);
  await exited;
  clearTimeout(killer);
}

describe('the Redis REST store on Vercel’s Edge runtime, across two isolates', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-edge-rest-'));
  let redis: RedisServer;
  let front: RedisRestFront;
  const isolates: Isolate[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
    front = await RedisRestFront.start(redis.url, TOKEN);
    const outfile = join(dir, 'function.js');
    const options = webBundleOptions({ entry: join(__dirname, 'entries', 'edge-redis-rest.ts'), outfile, format: 'iife' });
    await build({ ...options, define: { REST_URL: JSON.stringify(front.url), REST_TOKEN: JSON.stringify(TOKEN) } });
    isolates.push(await serve(outfile), await serve(outfile));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(isolates.map((isolate) => stop(isolate.child)));
    await front?.close();
    await redis?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs each of 50 deliveries’ handlers exactly once when each is sent 3 times at once', async () => {
    const deliveries: SignedDelivery[] = Array.from({ length: 50 }, () => signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET }));
    // As svc does: an answer that is not 2xx (409 while another copy runs, 503) is sent again later.
    const send = async (signed: SignedDelivery, isolate: Isolate): Promise<unknown> => {
      for (let attempt = 1; ; attempt++) {
        const res = await fetch(`${isolate.url}/webhooks/board`, { method: 'POST', headers: signed.headers, body: signed.body });
        const answer = (await res.json()) as unknown;
        if (res.status === 200 || attempt === 30) return answer;
        expect([409, 503]).toContain(res.status);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const answers = await Promise.all(deliveries.flatMap((signed) => [0, 1, 2].map((i) => send(signed, isolates[i % 2]!))));
    const handled = await Promise.all(isolates.map(async (isolate) => Number(await (await fetch(`${isolate.url}/handled`)).text())));
    expect(handled[0]! + handled[1]!).toBe(50);
    // Both isolates ran some: the claims were shared, not merely local.
    expect(handled.every((n) => n > 0)).toBe(true);
    expect(answers.filter((a) => JSON.stringify(a) === '{"ok":true}')).toHaveLength(50);
    expect(answers.filter((a) => JSON.stringify(a) === '{"ok":true,"duplicate":true}')).toHaveLength(100);
  }, 120_000);

  it('logs no token', () => {
    expect(isolates.map((isolate) => isolate.output).join('\n')).not.toContain(TOKEN);
  });
});
