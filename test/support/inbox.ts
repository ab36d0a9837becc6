import { RedisServer } from './redis-server';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, type Middleware } from '../../src';
import type { SignedRequest } from './sign';

/** A middleware served by node:http on a free loopback port. */
export async function serve(middleware: Middleware): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(createNodeHandler(middleware));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Sends a signed delivery as svc does: a POST it gives up on after 10 s. Resolves the status and how long the answer took. */
export async function deliver(url: string, signed: SignedRequest): Promise<{ status: number; ms: number; body: unknown }> {
  const started = performance.now();
  const res = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body, signal: AbortSignal.timeout(10_000) });
  const body = await res.json();
  return { status: res.status, ms: performance.now() - started, body };
}

/** Polls `check` until it is true, or fails after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A real redis-server for a whole test file, and clean-ups run after each test (last added first):
 * `const suite = redisSuite();` then `suite.redis.url` and `suite.cleanups.push(...)`.
 */
export function redisSuite(): { readonly redis: RedisServer; readonly cleanups: Array<() => Promise<unknown>> } {
  let redis: RedisServer | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await redis?.close();
  });
  return {
    get redis() {
      if (redis === undefined) throw new Error('redis-server is not started yet');
      return redis;
    },
    cleanups,
  };
}

/** Delivers as svc does over time: a 409 or 5xx answer is retried (here after 200 ms) until a 200. */
export async function deliverUntilAccepted(url: string, signed: SignedRequest, attempts = 20): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < attempts; i++) {
    const { status } = await deliver(url, signed);
    statuses.push(status);
    if (status === 200) return statuses;
    if (status !== 409 && status < 500) throw new Error(`refused with ${status}: ${statuses.join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not accepted after ${attempts} attempts: ${statuses.join(', ')}`);
}
