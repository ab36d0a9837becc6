import { isElsewhere } from '../../src/watch/expect-url';
import { BOT_URL, HOOKS_ORIGIN } from '../support/emulated-svc';
import { harness, LEVEL, sleep, until, type Harness } from './harness';

/** Where the emulated boards' webhooks deliver: each URL adds its own `?board=` query. */
const EXPECT = `${HOOKS_ORIGIN}/webhooks/board`;

describe('isElsewhere: scheme, host with port, and path are compared; nothing else', () => {
  it.each<[string, string, boolean]>([
    ['https://hooks.example.com/webhooks/board', 'https://hooks.example.com/webhooks/board', false],
    ['https://hooks.example.com/webhooks/board?board=b1&token=x', 'https://hooks.example.com/webhooks/board', false],
    ['https://hooks.example.com/webhooks/board#part', 'https://hooks.example.com/webhooks/board', false],
    ['https://HOOKS.example.com/webhooks/board', 'https://hooks.example.com/webhooks/board', false],
    ['https://hooks.example.com:443/webhooks/board', 'https://hooks.example.com/webhooks/board', false],
    ['https://hooks.example.com/webhooks/board/', 'https://hooks.example.com/webhooks/board', false],
    ['https://user:pass@hooks.example.com/webhooks/board', 'https://hooks.example.com/webhooks/board', false],
    ['http://hooks.example.com/webhooks/board', 'https://hooks.example.com/webhooks/board', true],
    ['https://evil.example.net/webhooks/board', 'https://hooks.example.com/webhooks/board', true],
    ['https://hooks.example.com:8443/webhooks/board', 'https://hooks.example.com/webhooks/board', true],
    ['https://hooks.example.com/webhooks/other', 'https://hooks.example.com/webhooks/board', true],
    ['https://hooks.example.com/Webhooks/board', 'https://hooks.example.com/webhooks/board', true],
    ['https://hooks.example.com/webhooks/board//', 'https://hooks.example.com/webhooks/board', true],
    ['not a url', 'https://hooks.example.com/webhooks/board', true],
  ])('%s against %s → elsewhere %s', (actual, expected, elsewhere) => {
    expect(isElsewhere(actual, expected)).toBe(elsewhere);
  });
});

describe('watchWebhooks({ expectUrl }): a webhook aimed elsewhere is misdirected', () => {
  let h: Harness;
  afterEach(() => h.close());

  /** Sets the board's webhook at `url` through svc's route, keeping its secret. */
  const aim = (board: string, url: string) => h.client.setBoardWebhook(board, { url, secret: h.svc.knownSecret(board) });

  it.each<[string, (board: string) => Promise<unknown>, string]>([
    ['another host', (board) => aim(board, `https://evil.example.net/webhooks/board?board=${board}`), 'https://evil.example.net/webhooks/board?…'],
    ['another port', (board) => aim(board, `https://hooks.example.com:8443/webhooks/board?board=${board}`), 'https://hooks.example.com:8443/webhooks/board?…'],
    ['another path', (board) => aim(board, `https://hooks.example.com/webhooks/other?board=${board}`), 'https://hooks.example.com/webhooks/other?…'],
    // svc refuses http:// in a PUT; a state that holds it anyway is read as it came.
    [
      'another scheme',
      async (board) => h.svc.fault(board, { fields: { url: `http://hooks.example.com/webhooks/board?board=${board}` } }),
      'http://hooks.example.com/webhooks/board?…',
    ],
  ])('%s: misdirected, at error, the line naming both URLs without their query; set back → healthy', async (_name, redirect, shown) => {
    h = await harness({ boards: 2 });
    const [board, other] = h.svc.boardIds as [string, string];
    h.watch({ expectUrl: EXPECT });
    await h.watcher!.checked();
    expect(h.path(board)).toEqual(['none→healthy']);
    await redirect(board);
    await until(() => h.path(board).length === 2, 'misdirected');
    await sleep(150); // more polls of the same state: no second change
    expect(h.path(board)).toEqual(['none→healthy', 'healthy→misdirected']);
    expect(h.path(other)).toEqual(['none→healthy']);
    const status = h.changes.at(-1)!.current;
    expect(status).toMatchObject({ state: 'misdirected', url: shown, expectedUrl: EXPECT, svcState: 'healthy' });
    expect(status.summary).toBe(
      `misdirected: svc delivers to ${shown}, not to the expected ${EXPECT} (svc reports it healthy): its events go elsewhere; set the URL again (PUT), it is never re-enabled there`,
    );
    const line = h.lines().find((l) => l.state === 'misdirected')!;
    expect(line).toMatchObject({ level: LEVEL.error, boardId: board, url: shown, expectedUrl: EXPECT, svcState: 'healthy', previous: 'healthy' });
    expect(h.logText()).not.toContain(`board=${board}`);

    h.svc.fault(board, undefined);
    await aim(board, `${EXPECT}?board=${board}`);
    await until(() => h.path(board).length === 3, 'healthy again');
    expect(h.path(board)).toEqual(['none→healthy', 'healthy→misdirected', 'misdirected→healthy']);
  });

  it('the same URL with another query, or a trailing slash, is not misdirected', async () => {
    h = await harness({ boards: 2 });
    const [a, b] = h.svc.boardIds as [string, string];
    await aim(a, `${EXPECT}?tenant=42&board=${a}`);
    await aim(b, `${EXPECT}/`);
    h.watch({ expectUrl: `${EXPECT}?board=expected-query` });
    await h.watcher!.checked();
    await sleep(100);
    expect(h.path(a)).toEqual(['none→healthy']);
    expect(h.path(b)).toEqual(['none→healthy']);
    expect(h.watcher!.statuses().map((s) => s.expectedUrl)).toEqual([`${EXPECT}?…`, `${EXPECT}?…`]);
  });

  it("credentials and the query of svc's URL and of the expected one never appear in a status or a line", async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    h.svc.fault(board, { fields: { url: 'https://hook-user:hook-password-123@evil.example.net/in?token=query-token-456#frag-789' } });
    h.watch({ expectUrl: `${EXPECT}?key=expected-key-000` });
    await h.watcher!.checked();
    const status = h.watcher!.statuses()[0]!;
    expect(status).toMatchObject({ state: 'misdirected', url: 'https://evil.example.net/in?…', expectedUrl: `${EXPECT}?…` });
    const shown = `${h.logText()}\n${JSON.stringify(h.changes)}`;
    for (const hidden of ['hook-user', 'hook-password-123', 'query-token-456', 'frag-789', 'expected-key-000']) expect(shown).not.toContain(hidden);
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['a URL that is not a text: somewhere else', { url: 42 }, { state: 'misdirected', url: '(not a URL)', svcState: 'healthy' }],
    ['a URL that cannot be read: somewhere else', { url: 'hooks example' }, { state: 'misdirected', url: '(not a URL)' }],
    ['no URL at all: nothing to compare', { url: null }, { state: 'healthy', expectedUrl: EXPECT }],
  ])("svc's state with %s", async (_name, fields, status) => {
    h = await harness({ boards: 1 });
    h.svc.fault(h.svc.boardIds[0]!, { fields });
    h.watch({ expectUrl: EXPECT });
    await h.watcher!.checked();
    expect(h.watcher!.statuses()[0]).toMatchObject(status);
  });

  it('failing elsewhere: misdirected, svcState failing, with when svc disables it', async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    await aim(board, 'https://evil.example.net/webhooks/board');
    await h.svc.failDeliveries(board, { error: 'receiver answered 502' });
    h.watch({ expectUrl: EXPECT });
    await h.watcher!.checked();
    const status = h.watcher!.statuses()[0]!;
    expect(status).toMatchObject({ state: 'misdirected', svcState: 'failing', lastError: expect.any(String) });
    expect(status.disablesAt).toBe(h.svc.webhook(board)!.failingSince! + 24 * 60 * 60 * 1000);
  });

  it('a function answers per webhook; undefined leaves that webhook unchecked', async () => {
    h = await harness({ boards: 3 });
    const [a, b, c] = h.svc.boardIds as [string, string, string];
    await aim(b, `https://b.example.net/hook?board=${b}`);
    await aim(c, `https://anywhere.example.net/hook?board=${c}`);
    const asked: unknown[] = [];
    h.watch({
      bot: { client: h.botClient },
      expectUrl: (target) => {
        asked.push(target);
        if (target.webhook === 'bot') return 'https://bot.example.net/webhooks/bot';
        return target.boardId === a ? EXPECT : target.boardId === b ? 'https://b.example.net/hook' : undefined;
      },
    });
    await h.watcher!.checked();
    const states = Object.fromEntries(h.watcher!.statuses().map((s) => [s.webhook === 'bot' ? 'bot' : s.boardId, [s.state, s.expectedUrl]]));
    expect(states).toEqual({
      [a]: ['healthy', EXPECT],
      [b]: ['healthy', 'https://b.example.net/hook'],
      [c]: ['healthy', undefined],
      bot: ['misdirected', 'https://bot.example.net/webhooks/bot'],
    });
    expect(asked).toEqual(expect.arrayContaining([{ webhook: 'bot' }, { webhook: 'board', boardId: a }]));
  });

  it("bot.expectUrl is the bot's; a fixed expectUrl is the boards' only", async () => {
    h = await harness({ boards: 1 });
    h.watch({ bot: { client: h.botClient, expectUrl: 'https://bot.example.net/webhooks/bot' }, expectUrl: BOT_URL });
    await h.watcher!.checked();
    expect(h.watcher!.statuses().map((s) => [s.webhook, s.state])).toEqual([
      ['board', 'misdirected'],
      ['bot', 'misdirected'],
    ]);
    await h.close();
    h = await harness({ boards: 1 });
    h.watch({ bot: { client: h.botClient, expectUrl: BOT_URL }, expectUrl: EXPECT });
    await h.watcher!.checked();
    expect(h.watcher!.statuses().map((s) => [s.webhook, s.state])).toEqual([
      ['board', 'healthy'],
      ['bot', 'healthy'],
    ]);
  });

  it('an expectUrl function that throws, or answers a URL svc could not hold: unchecked, one warn line', async () => {
    h = await harness({ boards: 2 });
    const [a, b] = h.svc.boardIds as [string, string];
    await aim(a, 'https://evil.example.net/x');
    await aim(b, 'https://evil.example.net/x');
    h.watch({
      expectUrl: (target) => {
        if (target.webhook === 'board' && target.boardId === a) throw new Error('directory down');
        return 'http://127.0.0.1/hook';
      },
    });
    await h.watcher!.checked();
    expect(h.watcher!.statuses().map((s) => s.state)).toEqual(['healthy', 'healthy']);
    const lines = h.lines().filter((l) => /its URL is not checked/.test(l.msg));
    expect(lines.map((l) => [l.level, l.boardId])).toEqual(
      expect.arrayContaining([
        [LEVEL.warn, a],
        [LEVEL.warn, b],
      ]),
    );
    expect(lines.find((l) => l.boardId === a)!.msg).toMatch(/expectUrl threw \(directory down\)/);
    expect(lines.find((l) => l.boardId === b)!.msg).toMatch(/expectUrl answered a URL svc could not hold \(it must use https/);
  });
});
