import { BOT_URL, HOOKS_ORIGIN } from '../support/emulated-svc';
import { harness, LEVEL, sleep, until, type Harness } from './harness';

const DAY_MS = 24 * 60 * 60 * 1000;
const SECRET = 'the-receivers-board-secret-0123456789';
/** Where the emulated boards' webhooks deliver: each URL adds its own `?board=` query. */
const EXPECT = `${HOOKS_ORIGIN}/webhooks/board`;

describe('watchWebhooks({ reenable: true }): the secret is PUT only to the expected URL', () => {
  let h: Harness;
  afterEach(() => h.close());

  /** The PUTs after the test's own (which set the webhook up). */
  const puts = (after = 0) => h.svc.requests.filter((r) => r.method === 'PUT').slice(after);
  const pings = () => h.svc.requests.filter((r) => r.path.endsWith('/ping'));

  /** A day of failed deliveries: svc disables the webhook. */
  const disable = async (board: string) => {
    await h.svc.failDeliveries(board, { error: 'receiver answered 503' });
    await h.svc.advance(DAY_MS);
    expect(h.svc.webhook(board)).toMatchObject({ enabled: false });
  };

  it('disabled and aimed elsewhere: misdirected wins (svcState disabled); no ping, no PUT', async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    await h.client.setBoardWebhook(board, { url: 'https://evil.example.net/webhooks/board', secret: SECRET });
    await disable(board);
    const own = puts().length;
    h.watch({ reenable: true, secret: SECRET, expectUrl: EXPECT, probe: () => true, reenableBackoffMs: 20 });
    await h.watcher!.checked();
    await sleep(200);
    expect(h.path(board)).toEqual(['none→misdirected']);
    expect(h.changes[0]!.current).toMatchObject({ state: 'misdirected', svcState: 'disabled', url: 'https://evil.example.net/webhooks/board' });
    expect(h.changes[0]!.current.summary).toMatch(/\(svc reports it disabled\)/);
    expect(puts(own)).toEqual([]);
    expect(pings()).toEqual([]);
    expect(h.svc.webhook(board)).toMatchObject({ enabled: false });
  });

  it('expectUrl answering undefined for a disabled board: not re-enabled, an error line naming the URL svc holds, no ping, no PUT', async () => {
    h = await harness({ boards: 2 });
    const [a, b] = h.svc.boardIds as [string, string];
    await disable(a);
    await disable(b);
    h.watch({
      reenable: true,
      secret: () => SECRET,
      expectUrl: (target) => (target.webhook === 'board' && target.boardId === b ? EXPECT : undefined),
      probe: () => true,
    });
    await until(() => h.path(b).length === 2, 'b re-enabled');
    await until(() => h.lines().some((l) => l.outcome === 'url_unchecked'), 'the refusal for a');
    await sleep(100);
    expect(h.path(a)).toEqual(['none→disabled']);
    expect(h.path(b)).toEqual(['none→disabled', 'disabled→healthy']);
    expect(puts().map((r) => r.which)).toEqual([b]);
    const line = h.lines().find((l) => l.outcome === 'url_unchecked')!;
    expect(line).toMatchObject({ level: LEVEL.error, boardId: a });
    expect(line.msg).toContain(
      `not re-enabled: svc holds ${EXPECT}?…, and expectUrl gave no URL for it; the re-enabling PUT would send the receiver's secret there`,
    );
    expect(h.logText()).not.toContain(`board=${a}`);
  });

  it('the bot: a disabled bot webhook aimed elsewhere is not probed nor PUT', async () => {
    h = await harness({ boards: 0 });
    const BOT_SECRET = 'the-receivers-bot-secret-0123456789';
    await h.botClient.setBotWebhook({ url: 'https://evil.example.net/webhooks/bot', secret: BOT_SECRET });
    await h.svc.failDeliveries('bot', { error: 'receiver answered 503' });
    await h.svc.advance(DAY_MS);
    const probed: string[] = [];
    const fetchSpy: typeof fetch = async (input) => {
      probed.push(String(input));
      return new Response(null, { status: 401 });
    };
    const own = puts().length;
    h.watch({
      boards: undefined,
      bot: { client: h.botClient, secret: BOT_SECRET, expectUrl: BOT_URL },
      reenable: true,
      fetch: fetchSpy,
      reenableBackoffMs: 20,
    });
    await h.watcher!.checked();
    await sleep(150);
    expect(h.path('bot')).toEqual(['none→misdirected']);
    expect(probed).toEqual([]);
    expect(puts(own)).toEqual([]);
  });
});
