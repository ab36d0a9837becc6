/**
 * The whole loop against the emulated svc, on real servers: a board connected through the setup
 * client, 200 events delivered with 10 % repeats and a reordering window of 5, each handled once
 * and in board order by the inbox on a real redis-server; a 25-hour outage that leaves the webhook
 * disabled with its queue dropped; the watcher re-enabling it with the receiver's own secret.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, redisStore, svcBoardWebhook } from '../../src';
import { SvcClient } from '../../src/client';
import { watchWebhooks } from '../../src/watch';
import { createFakeSvc, silentLogger } from '../../src/testing';
import { eventually, redisSuite } from '../support/inbox';

const suite = redisSuite();
const HOUR_MS = 60 * 60 * 1000;
const SECRET = 'the-integrations-board-secret-0123456789';
const PUBLIC_URL = 'https://hooks.example.com/webhooks/board';

interface Handled {
  readonly id: string;
  readonly sequence: number;
  readonly gap: unknown;
}

/** The integration: an inbox receiver with board order on redis, one worker, behind node:http; `down` answers 503. */
async function integration() {
  const prefix = `e${randomUUID().slice(0, 8)}`;
  const store = redisStore({ url: suite.redis.url, prefix: `${prefix}-ids:` });
  const handled: Handled[] = [];
  const board = svcBoardWebhook({
    secret: SECRET,
    logger: silentLogger,
    store,
    inbox: { connection: suite.redis.url, prefix, ordered: true, gapWaitMs: 300, retryDelayMs: 50 },
  }).onAny((event, ctx) => void handled.push({ id: event.id, sequence: event.sequence, gap: ctx.gap }));
  const worker = board.work({ concurrency: 4, stalledIntervalMs: 500, lockDurationMs: 1000 });
  const state = { down: false };
  const receive = createNodeHandler(board);
  const server: Server = createServer((req, res) => (state.down ? res.writeHead(503).end() : receive(req, res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  suite.cleanups.push(
    () => store.close(),
    () => board.close(),
    () => worker.close(),
    () => new Promise<void>((resolve) => server.close(() => resolve())),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, handled, state };
}

describe('an integration against the emulated svc, with the inbox on redis', () => {
  it('gets 200 events once and in board order despite repeats and reordering, survives a 25 h outage, and is re-enabled keeping its secret', async () => {
    const app = await integration();
    const svc = await createFakeSvc({
      clock: 'manual',
      forward: { 'https://hooks.example.com': app.url },
      chaos: { seed: 34, duplicateRate: 0.1, reorderWindow: 5 },
    });
    suite.cleanups.push(() => svc.close());
    const client = new SvcClient({ baseUrl: svc.baseUrl, token: svc.person.token });
    const boardId = svc.board.id;

    // Connected through svc's setup route; svc's ping reaches the receiver.
    await client.setBoardWebhook(boardId, { url: PUBLIC_URL, secret: SECRET });
    expect(await client.pingBoardWebhook(boardId)).toMatchObject({ ok: true, status: 200 });

    for (let i = 0; i < 200; i++) svc.emitBoardEvent({ type: 'task.updated' });
    await svc.advance(0);
    svc.audit.assertAllDelivered();
    const attempts = svc.audit.attempts().filter((a) => a.copy !== 'ping');
    const repeats = attempts.filter((a) => a.copy === 'duplicate').length;
    expect(repeats).toBeGreaterThanOrEqual(8);
    expect(repeats).toBeLessThanOrEqual(35);
    const arrival = attempts.filter((a) => a.copy === 'original').map((a) => a.sequence!);
    expect(arrival).not.toEqual([...arrival].sort((x, y) => x - y));

    await eventually(() => app.handled.filter((h) => h.sequence > 0).length >= 200, 30_000, 'the 200 events to be handled');
    const events = app.handled.filter((h) => h.sequence > 0);
    svc.audit.assertNoneHandledTwice(events.map((h) => h.id));
    svc.audit.assertBoardOrder(events.map((h) => h.sequence));
    expect(events.map((h) => h.sequence)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));

    // 25 hours down: svc retries for a day, disables the webhook and drops its queue.
    app.state.down = true;
    const first = svc.emitBoardEvent({ type: 'task.created' });
    await svc.advance(23 * HOUR_MS);
    const late = svc.emitBoardEvent({ type: 'task.updated' });
    await svc.advance(2 * HOUR_MS);
    expect(await client.getBoardWebhook(boardId)).toMatchObject({ enabled: false, pending: 0 });
    const fate = (id: string) => svc.audit.deliveries().find((d) => d.id === id)?.status;
    // The first lived its day out; the later one was still queued when svc dropped the queue.
    expect([fate(first.id), fate(late.id)]).toEqual(['expired', 'dropped']);
    expect(svc.emitBoardEvent({ type: 'task.updated' }).queued).toBe(false);

    // Back up: the watcher pings through svc and re-enables the webhook with the receiver's secret.
    app.state.down = false;
    const watcher = watchWebhooks({ client, boards: [boardId], secret: SECRET, expectUrl: PUBLIC_URL, reenable: true, logger: false });
    await watcher.checked();
    await watcher.close();
    expect(await client.getBoardWebhook(boardId)).toMatchObject({ enabled: true, disabledAt: null });
    expect(svc.secretMatches({ boardId }, SECRET)).toBe(true);

    // The next event is handled: after the three svc never delivered, reported as a gap.
    const next = svc.emitBoardEvent({ type: 'task.created' });
    await svc.advance(0);
    await eventually(() => app.handled.some((h) => h.id === next.id), 10_000, 'the event after the re-enable');
    expect(app.handled.find((h) => h.id === next.id)).toMatchObject({ sequence: 204, gap: expect.anything() });
    svc.audit.assertNoneHandledTwice(app.handled.map((h) => h.id));
  }, 60_000);
});
