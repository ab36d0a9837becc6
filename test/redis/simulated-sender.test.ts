import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { redisStore, svcBoardWebhook, type BoardWebhookMiddleware, type RedisStore } from '../../src';
import { silentLogger } from '../support/apps';
import { RedisServer } from '../support/redis-server';
import { fixture, signBoard } from '../support/sign';

/**
 * A sender that follows the spec's delivery rules on a fake clock — at least once, to any instance,
 * retried after 1, 2, 4 … minutes (at most an hour apart) for a day — drives a few thousand
 * deliveries through two instances sharing one Redis, while the test injects handler failures,
 * handler timeouts, a store outage, a frozen store and an instance restart.
 */
const DELIVERIES = 2000;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const CONCURRENCY = 32;

interface Delivery {
  readonly event: Record<string, any>;
  readonly firstAt: number;
  attempts: number;
  nextAt: number;
  done: boolean;
}

interface Instance {
  readonly board: BoardWebhookMiddleware;
  readonly server: Server;
  readonly store: RedisStore;
  readonly url: string;
}

/** A small deterministic generator, so a failing run can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('a simulated sender against two instances and one Redis', () => {
  let redis: RedisServer;
  const clock = { now: 1_800_000_000_000 };
  const handled = new Map<string, number>();
  const violations: string[] = [];
  const rand = random(42);
  const instances: Instance[] = [];

  async function handler(event: { id: string }): Promise<void> {
    const roll = rand();
    if (roll < 0.08) throw new Error('injected handler failure');
    if (roll < 0.12) await new Promise((r) => setTimeout(r, 250)); // outlives the 100 ms timeout, then succeeds
    handled.set(event.id, (handled.get(event.id) ?? 0) + 1);
  }

  async function startInstance(): Promise<Instance> {
    const store = redisStore({ url: redis.url, prefix: 'sim:', commandTimeoutMs: 300 });
    const board = svcBoardWebhook({
      secret: 'simulated-sender-secret-0123',
      logger: silentLogger,
      store,
      now: () => clock.now,
      timeoutMs: 100,
      leaseMs: 1000,
    }).onAny(handler);
    const server = express().use(board).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as AddressInfo;
    return { board, server, store, url: `http://127.0.0.1:${port}/webhooks/board` };
  }

  async function stopInstance(instance: Instance): Promise<void> {
    await instance.board.close();
    await new Promise((r) => instance.server.close(r));
    await instance.store.close();
  }

  async function attempt(delivery: Delivery): Promise<void> {
    const target = instances[Math.floor(rand() * instances.length)]!;
    const signed = signBoard(delivery.event, { secret: 'simulated-sender-secret-0123', timestamp: Math.floor(clock.now / 1000) });
    let status = 0;
    try {
      const res = await fetch(target.url, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(10_000),
      });
      status = res.status;
      await res.arrayBuffer();
    } catch {
      status = 0;
    }
    delivery.attempts++;
    if (status >= 200 && status < 300) {
      if ((handled.get(delivery.event.id) ?? 0) === 0) violations.push(`2xx for unhandled delivery ${delivery.event.id}`);
      delivery.done = true;
      return;
    }
    const backoff = Math.min(2 ** (delivery.attempts - 1), 60) * MINUTE;
    delivery.nextAt = clock.now + backoff;
  }

  async function sendDue(deliveries: Delivery[]): Promise<void> {
    const due = deliveries.filter((d) => !d.done && d.nextAt <= clock.now);
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < due.length) await attempt(due[next++]!);
      }),
    );
  }

  beforeAll(async () => {
    redis = await RedisServer.start();
    instances.push(await startInstance(), await startInstance());
  });

  afterAll(async () => {
    redis?.unpause();
    await Promise.all(instances.map(stopInstance));
    await redis?.close();
  });

  it('handles every delivery successfully exactly once, and never answers 2xx for an unhandled one', async () => {
    const deliveries: Delivery[] = Array.from({ length: DELIVERIES }, () => ({
      event: fixture('board', 'task.created'),
      firstAt: clock.now,
      attempts: 0,
      nextAt: clock.now,
      done: false,
    }));
    const faults: Record<number, () => Promise<void> | void> = {
      1: () => redis.stop(), // outage: every claim fails closed
      2: () => redis.resume(),
      3: () => redis.pause(), // a store that answers nothing
      4: () => redis.unpause(),
      5: async () => {
        // A rolling deploy: instance 0 drains and is replaced.
        const old = instances.shift()!;
        const replacement = startInstance();
        await stopInstance(old);
        instances.push(await replacement);
      },
    };

    for (let round = 0; deliveries.some((d) => !d.done); round++) {
      await faults[round]?.();
      await sendDue(deliveries);
      const pending = deliveries.filter((d) => !d.done);
      const expired = pending.filter((d) => clock.now - d.firstAt > DAY);
      expect(expired).toHaveLength(0);
      if (pending.length === 0) break;
      // Real time passes too, so that claims orphaned by the outage reach the end of their lease.
      await new Promise((r) => setTimeout(r, 150));
      clock.now = Math.max(clock.now, Math.min(...pending.map((d) => d.nextAt)));
    }

    expect(violations).toEqual([]);
    const counts = deliveries.map((d) => handled.get(d.event.id) ?? 0);
    expect(counts.filter((c) => c !== 1)).toEqual([]);
    expect(deliveries.every((d) => d.done)).toBe(true);
    // The faults did bite: some deliveries needed retries.
    expect(deliveries.filter((d) => d.attempts > 1).length).toBeGreaterThan(DELIVERIES * 0.1);
  }, 120_000);
});
