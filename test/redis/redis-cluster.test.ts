import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { redisStore, svcBoardWebhook, type ClaimResult, type InboxWorker, type RedisStore } from '../../src';
import { DeadLetters } from '../../src/inbox/dead-letters';
import { redisStoreKey } from '../../src/dedup/redis-store';
import { runCli } from '../cli/run-cli';
import { deliver, eventually, serve } from '../support/inbox';
import { silentLogger } from '../support/apps';
import { RedisCluster } from '../support/redis-cluster';
import { BOARD_SECRET, fixture, signBoard } from '../support/sign';

/**
 * The de-dup store and the inbox on a real Redis Cluster: six redis-server processes in cluster
 * mode (three masters, three replicas), as docs/redis-cluster.md sets them up.
 */
let cluster: RedisCluster;
let admin: Cluster;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  cluster = await RedisCluster.start({ nodeTimeoutMs: 1000 });
  admin = new Cluster(cluster.seeds);
}, 60_000);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  admin?.disconnect();
  await cluster?.close();
});

function store(): RedisStore {
  const s = redisStore({ cluster: cluster.seeds });
  cleanups.push(() => s.close());
  return s;
}

function token(result: ClaimResult): string {
  if (result.state !== 'claimed') throw new Error(`expected a claim, got ${result.state}`);
  return result.token;
}

/** How many keys each master holds (masters by port). */
async function keysPerMaster(): Promise<number[]> {
  const counts: number[] = [];
  for (const node of cluster.running) {
    const client = new Redis(node.port, '127.0.0.1');
    try {
      if (/role:master/.test(await client.info('replication'))) counts.push(await client.dbsize());
    } finally {
      client.disconnect();
    }
  }
  return counts;
}

/** A board webhook whose store and inbox are on the cluster, with a worker, in this process. */
async function boardOnCluster(inbox: Record<string, unknown> = {}) {
  const handled: Array<{ id: string; sequence: number }> = [];
  const s = store();
  const board = svcBoardWebhook({
    secret: BOARD_SECRET,
    logger: silentLogger,
    store: s,
    inbox: { connection: { cluster: cluster.seeds }, retryDelayMs: 50, ...inbox },
  }).onAny((event: { id: string; sequence: number }) => {
    handled.push({ id: event.id, sequence: event.sequence });
  });
  const server = await serve(board);
  const worker: InboxWorker = board.work({ stalledIntervalMs: 500, lockDurationMs: 2000 });
  cleanups.push(
    () => board.close(),
    () => server.close(),
    () => worker.close(),
  );
  return { handled, url: `${server.url}/webhooks/board` };
}

describe('the de-dup store on a Redis Cluster', () => {
  it('claims, commits and releases ids of any form, spreading them over the three masters', async () => {
    const s = store();
    const ids = [...Array.from({ length: 60 }, () => randomUUID()), 'board:active', '{x}', 'é'.repeat(300)];
    for (const id of ids) await s.commit(id, token(await s.claim(id, 10_000)));
    for (const id of ids) expect(await s.claim(id, 10_000)).toEqual({ state: 'done' });
    const released = randomUUID();
    await s.release(released, token(await s.claim(released, 10_000)));
    expect((await s.claim(released, 10_000)).state).toBe('claimed');
    for (const id of ids) expect(await admin.get(redisStoreKey('svc-webhooks:', id))).toBe('done');
    const counts = await keysPerMaster();
    expect(counts).toHaveLength(3);
    for (const count of counts) expect(count).toBeGreaterThan(5);
  });

  it('gives exactly one of 50 concurrent claims of one id, across two stores', async () => {
    const [a, b] = [store(), store()];
    const id = randomUUID();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).claim(id, 10_000)));
    expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
  });
});

describe('the inbox on a Redis Cluster', () => {
  it('queues deliveries under the hash-tagged {svc-webhooks}, hands each to the worker once and answers a repeat as a duplicate', async () => {
    const { handled, url } = await boardOnCluster();
    const events = Array.from({ length: 20 }, () => fixture('board', 'task.created'));
    for (const event of events) expect((await deliver(url, signBoard(event))).status).toBe(200);
    await eventually(() => handled.length === events.length, 10_000, 'every delivery to be handled');
    expect(await deliver(url, signBoard(events[0]!))).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(new Set(handled.map((h) => h.id)).size).toBe(events.length);
    // Every key of the queues is in the prefix's slot.
    const slot = await cluster.slotOf('{svc-webhooks}');
    const keys = (
      await Promise.all(
        cluster.running
          .map((n) => new Redis(n.port, '127.0.0.1'))
          .map(async (c) => (await c.keys('*svc-webhooks}*').finally(() => c.disconnect())) as string[]),
      )
    ).flat();
    expect(keys.length).toBeGreaterThan(0);
    for (const key of new Set(keys)) expect(await cluster.slotOf(key)).toBe(slot);
  });

  it('hands a board its ordered events in sequence, one at a time, whatever order they came in', async () => {
    const { handled, url } = await boardOnCluster({ ordered: true, gapWaitMs: 60_000 });
    const board = { id: randomUUID(), key: 'K', name: 'n' };
    const events = [3, 1, 4, 2, 5].map((sequence) => {
      const event = fixture('board', 'task.updated', { sequence, board });
      event.task = { ...event.task, board_id: board.id, key: 'K-1' };
      return event;
    });
    for (const event of events) expect((await deliver(url, signBoard(event))).status).toBe(200);
    await eventually(() => handled.length === events.length, 10_000, "the board's five events");
    expect(handled.map((h) => h.sequence)).toEqual([1, 2, 3, 4, 5]);
  });

  it("keeps a delivery that keeps failing as a dead letter, which the dead letters list and retry on the cluster, and the CLI lists from the slot's master", async () => {
    let failing = true;
    const handled: string[] = [];
    const s = store();
    const board = svcBoardWebhook({
      secret: BOARD_SECRET,
      logger: silentLogger,
      store: s,
      inbox: { connection: { cluster: cluster.seeds }, prefix: '{dead}', retryForMs: 100, retryDelayMs: 50 },
    }).onAny((_event, ctx) => {
      if (failing) throw new Error('upstream is down');
      handled.push(ctx.deliveryId);
    });
    const server = await serve(board);
    const worker = board.work({ stalledIntervalMs: 500, lockDurationMs: 2000 });
    const letters = new DeadLetters(admin, '{dead}');
    cleanups.push(
      () => board.close(),
      () => server.close(),
      () => worker.close(),
      () => letters.close(),
    );
    const event = fixture('board', 'task.created');
    expect((await deliver(`${server.url}/webhooks/board`, signBoard(event))).status).toBe(200);
    await eventually(async () => (await letters.list()).length === 1, 10_000, 'the dead letter');
    expect((await letters.list()).map((l) => l.deliveryId)).toEqual([event.id]);
    const master = (await cluster.masterOf(await cluster.slotOf('{dead}')))!;
    const listed = await runCli(['inbox', 'list', '--json', '--prefix', '{dead}', '--redis-url', `redis://127.0.0.1:${master.port}`]);
    expect(JSON.parse(listed.stdout).map((l: { deliveryId: string }) => l.deliveryId)).toEqual([event.id]);
    failing = false;
    expect(await letters.retry(event.id)).toBe(true);
    await eventually(() => handled.includes(event.id), 10_000, 'the retried dead letter to be handled');
  });
});

describe('a failover on the Redis Cluster', () => {
  it("refuses deliveries with 503, never 2xx, while the queue's slot has no master, and handles every delivery it accepted once the replica took over", async () => {
    const { handled, url } = await boardOnCluster();
    const slot = await cluster.slotOf('{svc-webhooks}');
    const master = (await cluster.masterOf(slot))!;
    const accepted = new Set<string>();
    const answers: Array<{ status: number; sentAt: number; answeredAt: number }> = [];
    const send = async () => {
      const event = fixture('board', 'task.created');
      const sentAt = Date.now();
      const { status } = await deliver(url, signBoard(event));
      answers.push({ status, sentAt, answeredAt: Date.now() });
      if (status === 200) accepted.add(event.id);
    };
    for (let i = 0; i < 5; i++) await send();
    await cluster.kill(master);
    const killedAt = Date.now();
    let promotedAt: number | undefined;
    const watch = (async () => {
      await eventually(async () => (await cluster.masterOf(slot)) !== undefined, 20_000, 'a replica to take over the slot');
      promotedAt = Date.now();
    })();
    while (promotedAt === undefined) await send();
    await watch;
    // The old master comes back as a replica of the new one: WAIT has a replica to count again.
    await cluster.restart(master);
    await cluster.settled(20_000);
    await eventually(async () => (await send(), accepted.size >= 10), 20_000, 'deliveries to be accepted again');
    const during = answers.filter((a) => a.sentAt >= killedAt && a.answeredAt <= promotedAt!);
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((a) => a.status !== 503)).toEqual([]);
    await eventually(() => [...accepted].every((id) => handled.some((h) => h.id === id)), 20_000, 'every accepted delivery to be handled');
  }, 90_000);
});
