import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, svcBoardWebhook, svcBotWebhook, type BoardSecretClaim } from '../../src';
import { silentLogger } from '../support/apps';
import { BOT_URL, HOOKS_ORIGIN } from '../support/emulated-svc';
import { harness, LEVEL, sleep, until, type Harness } from './harness';

const DAY_MS = 24 * 60 * 60 * 1000;
const SECRET = 'the-receivers-board-secret-0123456789';
/** Where the emulated boards' webhooks deliver (each with its own `?board=` query, not compared). */
const EXPECT = `${HOOKS_ORIGIN}/webhooks/board`;

/** A real receiver on loopback (`url` is its base): svc's deliveries and pings reach it through the emulator's `forward`. */
async function receiver(
  secret: string | ((claim: BoardSecretClaim) => string | undefined),
): Promise<{ url: string; broken: { on: boolean }; pings: string[]; close: () => Promise<void> }> {
  const pings: string[] = [];
  const broken = { on: false };
  const board = svcBoardWebhook({ secret, logger: silentLogger }).on('ping', (event) => void pings.push(event.board.id));
  const handler = createNodeHandler(board);
  const server: Server = createServer((req, res) => {
    if (broken.on) {
      res.writeHead(500).end('down for maintenance');
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, broken, pings, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Disables a webhook as svc does: its deliveries fail (the receiver, if any, down meanwhile), the
 * watcher sees it failing when it runs, and a day later svc disables it.
 */
async function disable(h: Harness, which: string, rx?: { broken: { on: boolean } }): Promise<void> {
  if (rx !== undefined) rx.broken.on = true;
  const seen = h.path(which).length;
  await h.svc.failDeliveries(which, { error: 'receiver answered 503' });
  if (h.watcher !== undefined) await until(() => h.path(which).length > seen, 'failing');
  await h.svc.advance(DAY_MS);
  if (rx !== undefined) rx.broken.on = false;
}

function puts(h: Harness, board: string) {
  return h.svc.requests.filter((r) => r.method === 'PUT' && r.which === board).map((r) => JSON.parse(r.body) as { url: string; secret?: string });
}

describe('watchWebhooks({ reenable: true }): a disabled webhook is re-enabled, keeping the secret', () => {
  let h: Harness;
  let rx: Awaited<ReturnType<typeof receiver>>;
  afterEach(async () => {
    await h.close();
    await rx?.close();
  });

  it('with a fixed secret: ping answered by the receiver, then one PUT of the same url with that secret → healthy', async () => {
    rx = await receiver(SECRET);
    h = await harness({ boards: 1, forwardTo: rx.url });
    const [board] = h.svc.boardIds as [string];
    const { url } = h.svc.webhook(board)!;
    await h.svc.setSecret(board, SECRET);
    await disable(h, board, rx);
    h.watch({ reenable: true, expectUrl: EXPECT, secret: SECRET });
    await until(() => h.path(board).length === 2, 'disabled, then healthy');
    expect(h.path(board)).toEqual(['none→disabled', 'disabled→healthy']);
    expect(rx.pings).toEqual([board]);
    expect(puts(h, board)).toEqual([{ url, secret: SECRET }]);
    expect(h.svc.holds(board, SECRET)).toBe(true);
    expect(h.svc.violations).toEqual([]);
    const line = h.lines().find((l) => /: re-enabled:/.test(l.msg))!;
    expect(line).toMatchObject({ level: LEVEL.warn, boardId: board, state: 'healthy' });
    expect(line.msg).toMatch(
      /receiver answered the probe, and svc took a PUT of the same URL with the receiver's secret \(kept, not regenerated\); the queue svc dropped when it disabled it at \d{4}-.*Z is not delivered$/,
    );
    expect(h.logText()).not.toContain(SECRET);
    await sleep(200);
    expect(puts(h, board)).toHaveLength(1);
  });

  it("with the receiver's resolver: each board's own secret is PUT; svc never generates one", async () => {
    const secrets = new Map<string, string>();
    rx = await receiver(({ boardId }) => secrets.get(boardId));
    h = await harness({ boards: 3, forwardTo: rx.url });
    for (const board of h.svc.boardIds) secrets.set(board, h.svc.knownSecret(board));
    const [a, b, c] = h.svc.boardIds as [string, string, string];
    await disable(h, a, rx);
    await disable(h, c, rx);
    h.watch({ reenable: true, expectUrl: EXPECT, secret: ({ boardId }) => secrets.get(boardId) });
    await until(() => h.path(a).length === 2 && h.path(c).length === 2, 'both re-enabled');
    expect(puts(h, a)).toEqual([{ url: h.svc.webhook(a)!.url, secret: secrets.get(a) }]);
    expect(puts(h, c)).toEqual([{ url: h.svc.webhook(c)!.url, secret: secrets.get(c) }]);
    expect(puts(h, b)).toEqual([]);
    expect(h.svc.violations).toEqual([]);
    for (const secret of secrets.values()) expect(h.logText()).not.toContain(secret);
  });

  it('with no secret known for the board: no PUT at all, an error line saying why', async () => {
    rx = await receiver(SECRET);
    h = await harness({ boards: 1, forwardTo: rx.url });
    const [board] = h.svc.boardIds as [string];
    await disable(h, board, rx);
    h.watch({ reenable: true, expectUrl: EXPECT, secret: () => undefined, reenableBackoffMs: 50 });
    await until(() => h.lines().some((l) => l.outcome === 'no_secret'), 'the refusal');
    await sleep(200);
    expect(puts(h, board)).toEqual([]);
    expect(rx.pings).toEqual([]);
    expect(h.path(board)).toEqual(['none→disabled']);
    const line = h.lines().find((l) => l.outcome === 'no_secret')!;
    expect(line.level).toBe(LEVEL.error);
    expect(line.msg).toMatch(
      /not re-enabled: no secret is known for it \(a PUT without the receiver's secret would make svc generate one the receiver does not know\)/,
    );
  });

  it.each([
    ['throws', () => Promise.reject(new Error('vault sealed'))],
    ['answers a secret svc would refuse', () => 'short'],
    ['answers a token', () => `svc_bot_${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}_${'A'.repeat(43)}`],
  ])('when the resolver %s: no PUT', async (_name, resolver) => {
    rx = await receiver(SECRET);
    h = await harness({ boards: 1, forwardTo: rx.url });
    const [board] = h.svc.boardIds as [string];
    await disable(h, board, rx);
    h.watch({ reenable: true, expectUrl: EXPECT, secret: resolver as () => string, reenableBackoffMs: 50 });
    await until(() => h.lines().some((l) => l.outcome === 'no_secret'), 'the refusal');
    expect(puts(h, board)).toEqual([]);
    expect(h.logText()).not.toContain('A'.repeat(43));
  });

  it('when the receiver does not answer the ping: no PUT, a warn line, no second ping within the backoff', async () => {
    rx = await receiver(SECRET);
    h = await harness({ boards: 1, forwardTo: rx.url });
    const [board] = h.svc.boardIds as [string];
    await h.svc.setSecret(board, SECRET);
    await disable(h, board, rx);
    rx.broken.on = true;
    h.watch({ reenable: true, expectUrl: EXPECT, secret: SECRET });
    await until(() => h.lines().some((l) => l.outcome === 'probe_failed'), 'the failed probe');
    expect(h.lines().find((l) => l.outcome === 'probe_failed')).toMatchObject({ level: LEVEL.warn, retryInMs: 60_000 });
    expect(h.lines().find((l) => l.outcome === 'probe_failed')!.msg).toMatch(/the receiver did not answer the probe \(svc's ping was answered 500/);
    expect(puts(h, board)).toEqual([]);
    await sleep(200);
    expect(h.svc.counts.get('POST ping')).toBe(1); // backed off: no second ping
  });

  it('a failed probe backs off, doubling: attempts at about 1×, 2×, 4× reenableBackoffMs', async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    await disable(h, board);
    const attempts: number[] = [];
    h.watch({
      reenable: true,
      expectUrl: EXPECT,
      secret: SECRET,
      reenableBackoffMs: 100,
      intervalMs: 10,
      probe: () => {
        attempts.push(performance.now());
        return false;
      },
    });
    await until(() => attempts.length === 4, 'four attempts', 3_000);
    const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(100);
    expect(gaps[1]).toBeGreaterThanOrEqual(200);
    expect(gaps[2]).toBeGreaterThanOrEqual(400);
    expect(gaps[2]).toBeLessThan(1_200);
    expect(puts(h, board)).toEqual([]);
  });

  it("svc's 429 on the ping is honoured: the next ping waits for Retry-After, then the PUT follows", async () => {
    rx = await receiver(SECRET);
    h = await harness({ boards: 1, forwardTo: rx.url });
    const [board] = h.svc.boardIds as [string];
    await h.svc.setSecret(board, SECRET);
    h.svc.fault(board, { status: 429, retryAfter: '1', times: 1, on: 'ping' }); // someone pinged just before
    await disable(h, board, rx);
    h.watch({ reenable: true, expectUrl: EXPECT, secret: SECRET });
    await until(() => h.lines().some((l) => /rate-limited the probe \(429\); probing again in 1 s/.test(l.msg)), 'the 429');
    const limitedAt = performance.now();
    await until(() => h.path(board).length === 2, 're-enabled after the wait', 4_000);
    expect(performance.now() - limitedAt).toBeGreaterThanOrEqual(900);
    expect(h.svc.requests.filter((r) => r.path.endsWith('/ping')).map((r) => r.status)).toEqual([429, 200]);
    expect(h.svc.violations).toEqual([]);
  });

  it('never in a loop: disabled again with no delivery since the re-enable → left disabled, an error line; a delivery since resets it', async () => {
    rx = await receiver(SECRET);
    h = await harness({ boards: 1, forwardTo: rx.url });
    const [board] = h.svc.boardIds as [string];
    await h.svc.setSecret(board, SECRET);
    await disable(h, board, rx);
    h.watch({ reenable: true, expectUrl: EXPECT, secret: SECRET, probe: () => true });
    await until(() => h.path(board).length === 2, 're-enabled');
    await disable(h, board, rx); // still failing: no delivery succeeded since
    await until(() => h.lines().some((l) => /not re-enabling it again/.test(l.msg)), 'the refusal');
    await sleep(200);
    expect(puts(h, board)).toHaveLength(1);
    expect(h.path(board)).toEqual(['none→disabled', 'disabled→healthy', 'healthy→failing', 'failing→disabled']);
    const line = h.lines().find((l) => /not re-enabling it again/.test(l.msg))!;
    expect(line.level).toBe(LEVEL.error);
    expect(line.msg).toContain(`svc-webhooks board-webhook reenable ${board} --url <its URL>`);

    // Fixed and re-enabled by hand; deliveries succeed; a later disable is re-enabled again.
    await h.client.setBoardWebhook(board, { url: h.svc.webhook(board)!.url, secret: SECRET });
    await h.svc.succeedDelivery(board);
    await until(() => h.path(board).length === 5, 'healthy by hand');
    await sleep(100);
    await disable(h, board, rx);
    await until(() => h.path(board).length === 8, 'disabled and re-enabled again');
    expect(h.path(board).slice(4)).toEqual(['disabled→healthy', 'healthy→failing', 'failing→disabled', 'disabled→healthy']);
    expect(puts(h, board)).toHaveLength(3); // the watcher's, by hand, the watcher's
    expect(h.svc.violations).toEqual([]);
  });

  it('the bot webhook: probed with an unsigned POST (its receiver refuses it: up), then PUT with the bot secret', async () => {
    const BOT_SECRET = 'the-receivers-bot-secret-0123456789';
    const bot = svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger });
    const server = createServer(createNodeHandler(bot));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const local = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/bot`;
    rx = { url: local, broken: { on: false }, pings: [], close: () => new Promise((resolve) => server.close(() => resolve())) };
    h = await harness({ boards: 0 });
    const url = h.svc.webhook('bot')!.url;
    await h.svc.setSecret('bot', BOT_SECRET);
    await disable(h, 'bot');
    const probed: Array<{ url: string; status: number }> = [];
    const toLocal: typeof fetch = async (input, init) => {
      const res = await fetch(local, init);
      probed.push({ url: String(input), status: res.status });
      return res;
    };
    h.watch({ boards: undefined, bot: { client: h.botClient, secret: BOT_SECRET, expectUrl: BOT_URL }, reenable: true, fetch: toLocal });
    await until(() => h.path('bot').length === 2, 'bot re-enabled');
    expect(h.path('bot')).toEqual(['none→disabled', 'disabled→healthy']);
    expect(probed).toEqual([{ url, status: 401 }]);
    expect(h.svc.requests.filter((r) => r.method === 'PUT' && r.which === 'bot').map((r) => JSON.parse(r.body))).toEqual([{ url, secret: BOT_SECRET }]);
    expect(h.svc.violations).toEqual([]);
  });

  it('a paused or missing webhook is never PUT', async () => {
    h = await harness({ boards: 2 });
    const [a, b] = h.svc.boardIds as [string, string];
    h.svc.setPlan(a, 'free');
    await h.svc.deleteWebhook(b);
    h.watch({ reenable: true, expectUrl: EXPECT, secret: SECRET, probe: () => true, missingIntervalMs: 20 });
    await h.watcher!.checked();
    await sleep(200);
    expect(h.svc.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });
});
