import { svcBoardWebhook, type BoardWebhookMiddleware } from '../../src';
import { silentLogger } from '../../src/testing';
import express from 'express';
import { PassThrough } from 'node:stream';
import { emulatedSvc, HOOKS_ORIGIN, type EmulatedSvc } from '../support/emulated-svc';
import { listen } from './listen';
import { expectOneLine, runCli, spawnCli } from './run-cli';

const DAY_MS = 24 * 60 * 60 * 1000;
const SECRET = 'the-receivers-board-secret-0123456789';
/** The URL the emulated board's webhook delivers to, without its `?board=` query (not compared). */
const URL = `${HOOKS_ORIGIN}/webhooks/board`;

describe("svc-webhooks board-webhook reenable <id>: the watcher's re-enable, once, by hand", () => {
  let receiver: BoardWebhookMiddleware | undefined;
  let app: { url: string; close: () => Promise<void> };
  let svc: EmulatedSvc;
  let env: Record<string, string>;
  let board: string;

  beforeAll(async () => {
    app = await listen(express().use((req, res, next) => (receiver ? receiver(req, res, next) : res.status(502).end())));
  });
  afterAll(() => app.close());
  beforeEach(async () => {
    svc = await emulatedSvc({ boards: 1, forwardTo: app.url, boardSecret: SECRET });
    board = svc.boardIds[0]!;
    env = { SVC_TOKEN: svc.svc.person.token, SVC_BASE_URL: svc.svc.baseUrl, SVC_WEBHOOK_SECRET: SECRET };
    receiver = svcBoardWebhook({ secret: SECRET, logger: silentLogger });
  });
  afterEach(() => svc.close());

  /** A day and a minute of failed deliveries (the receiver away): svc has disabled the webhook. */
  const disable = async () => {
    const running = receiver;
    receiver = undefined;
    await svc.failSince(board, DAY_MS + 60_000);
    receiver = running;
    expect(svc.svc.webhook({ boardId: board })).toMatchObject({ enabled: false });
  };
  const puts = () =>
    svc
      .requests()
      .filter((r) => r.method === 'PUT')
      .map((r) => JSON.parse(r.body));

  it('pings, then PUTs the same url with the secret; exit 0 and the new state (the real launcher)', async () => {
    await disable();
    const result = await spawnCli(['board-webhook', 'reenable', board, '--url', URL], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(0, 3)).toEqual([
      "pinged: svc's ping was answered 200",
      're-enabled: PUT of the same URL with your secret (kept, not regenerated)',
      `svc reports the board webhook of board ${board} healthy: delivering, 0 pending`,
    ]);
    expect(puts()).toEqual([{ url: svc.svc.webhook({ boardId: board })!.url, secret: SECRET }]);
    expect(svc.svc.secretMatches({ boardId: board }, SECRET)).toBe(true);
    expect(result.stdout).not.toContain(SECRET);
  });

  it('not disabled: nothing to do, exit 0, no ping, no PUT', async () => {
    const result = await runCli(['board-webhook', 'reenable', board], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`nothing to do: svc reports the board webhook of board ${board} healthy: delivering, 0 pending\n`);
    expect(svc.requests().map((r) => r.method)).toEqual(['GET']);
  });

  it('the receiver does not answer the ping: exit 1, no PUT', async () => {
    await disable();
    receiver = undefined;
    const result = await runCli(['board-webhook', 'reenable', '--board', board, '--url', URL], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/not re-enabled: the receiver did not answer the ping \(svc's ping was answered 502/);
    expectOneLine(result.stderr);
    expect(puts()).toEqual([]);
  });

  it("a 429 on the ping: waits svc's Retry-After once, then goes on", async () => {
    await disable();
    svc.svc.injectApiFault({ status: 429, retryAfter: '1', times: 1, method: 'ping', on: { boardId: board } }); // someone pinged just before
    const result = await spawnCli(['board-webhook', 'reenable', board, '--url', URL], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^svc rate-limited the ping \(429\): waiting 1 s as it asked\npinged: svc's ping was answered 200\nre-enabled/);
    const pings = svc.requests().filter((r) => r.url.endsWith('/ping'));
    expect(pings.map((r) => r.status)).toEqual([429, 200]);
    expect(pings[1]!.receivedAt - pings[0]!.receivedAt).toBeGreaterThanOrEqual(995);
    expect(puts()).toHaveLength(1);
  });

  it('exit 3 when svc cannot be reached, exit 1 when the webhook is missing', async () => {
    const outage = svc.svc.injectApiFault({ status: 503, on: { boardId: board } });
    const down = await runCli(['board-webhook', 'reenable', board], { env });
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/state unknown: svc answered 503/);
    outage();
    await svc.deleteWebhook(board);
    const missing = await runCli(['board-webhook', 'reenable', board], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no webhook: svc answered 404.*set it with board-webhook set/);
  });

  it.each<[string, string[], Record<string, string | undefined>, RegExp]>([
    ['no secret: svc would generate one', ['reenable', 'BOARD'], { SVC_WEBHOOK_SECRET: undefined }, /the webhook secret is required/],
    ['a secret svc refuses', ['reenable', 'BOARD'], { SVC_WEBHOOK_SECRET: 'short' }, /the webhook secret is refused/],
    ['--url over http', ['reenable', 'BOARD', '--url', 'http://hooks.example.com/webhooks/board'], {}, /--url must be the https URL .*must use https/],
    ['--url not a URL', ['reenable', 'BOARD', '--url', 'hooks.example.com'], {}, /--url must be the https URL .*not an absolute URL/],
    ['the board twice', ['reenable', 'BOARD', '--board', 'BOARD'], {}, /name the board once/],
    ['no board', ['reenable'], {}, /reenable needs the board id/],
  ])('usage error, exit 2, nothing sent: %s', async (_name, args, overrides, message) => {
    await disable();
    const result = await runCli(['board-webhook', ...args.map((a) => (a === 'BOARD' ? board : a))], { env: { ...env, ...overrides } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(svc.requests()).toEqual([]);
  });

  describe('the secret is PUT only where --url says', () => {
    it('no --url: exit 1, the URL svc holds printed without its query; no ping, no PUT', async () => {
      await disable();
      const result = await runCli(['board-webhook', 'reenable', board], { env });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe(
        `not re-enabled: svc holds ${URL}?…; the PUT would send your secret there: confirm it is your receiver's with --url <that URL>\n`,
      );
      expectOneLine(result.stderr);
      expect(result.stderr).toContain(`not re-enabled: svc holds ${URL}?…; give it as --url if it is your receiver's`);
      expect(svc.requests().map((r) => r.method)).toEqual(['GET']);
      expect(`${result.stdout}${result.stderr}`).not.toContain(`board=${board}`);
    });

    it.each<[string, string]>([
      ['another host', 'https://evil.example.net/webhooks/board'],
      ['another port', 'https://hooks.example.com:8443/webhooks/board'],
      ['another path', 'https://hooks.example.com/webhooks/other'],
    ])('svc holds the URL, --url names %s: exit 1, both URLs named; no ping, no PUT', async (_name, other) => {
      await disable();
      const result = await runCli(['board-webhook', 'reenable', board, '--url', other], { env });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe(`not re-enabled: svc holds ${URL}?…, not ${other}; the PUT would send your secret there\n`);
      expect(result.stderr).toMatch(
        /^svc-webhooks board-webhook: not re-enabled: svc reports the board webhook of board \S+ misdirected: svc delivers to \S+, not to the expected /,
      );
      expect(svc.requests().map((r) => r.method)).toEqual(['GET']);
      expect(svc.svc.webhook({ boardId: board })).toMatchObject({ enabled: false });
    });

    it("the same URL with another query and a trailing slash is svc's: re-enabled", async () => {
      await disable();
      const result = await runCli(['board-webhook', 'reenable', board, '--url', `${URL}/?board=someone-else`], { env });
      expect(result.code).toBe(0);
      expect(puts()).toEqual([{ url: svc.svc.webhook({ boardId: board })!.url, secret: SECRET }]);
    });

    it("credentials and the query in svc's URL are never printed, with or without --json", async () => {
      await disable();
      svc.svc.injectApiFault({
        fields: { url: 'https://hook-user:hook-password-123@evil.example.net/in?token=query-token-456' },
        method: 'GET',
        on: { boardId: board },
      });
      for (const extra of [[], ['--url', URL], ['--json'], ['--url', URL, '--json']]) {
        const result = await runCli(['board-webhook', 'reenable', board, ...extra], { env });
        expect(result.code).toBe(1);
        const shown = `${result.stdout}${result.stderr}`;
        expect(shown).toContain('https://evil.example.net/in?…');
        for (const hidden of ['hook-user', 'hook-password-123', 'query-token-456', SECRET]) expect(shown).not.toContain(hidden);
      }
      expect(puts()).toEqual([]);
    });

    it('--json: the refusal as an outcome', async () => {
      await disable();
      const result = await runCli(['board-webhook', 'reenable', board, '--json'], { env });
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toMatchObject({ outcome: 'url_unconfirmed', webhook: { state: 'disabled', url: `${URL}?…` } });
    });
  });
  describe('without --url, on a terminal: the user confirms the URL svc holds by typing its host', () => {
    /** A terminal's stdin with `typed` on it, ended after it. */
    const terminal = (typed: string, isTTY = true) => {
      const stdin = Object.assign(new PassThrough(), { isTTY });
      stdin.end(typed);
      return stdin;
    };
    const PROMPT = `svc holds ${URL}?…: re-enabling sends your webhook secret there.\nType its host, hooks.example.com, if it is your receiver's (anything else stops): `;

    it('shows the URL without its query, asks for the host; typed, it pings and PUTs the same URL with the secret', async () => {
      await disable();
      const result = await runCli(['board-webhook', 'reenable', board], { env, stdin: terminal('hooks.example.com\n') });
      expect(result.stderr).toBe(PROMPT);
      expect(result.code).toBe(0);
      expect(result.stdout.split('\n').slice(0, 2)).toEqual([
        "pinged: svc's ping was answered 200",
        're-enabled: PUT of the same URL with your secret (kept, not regenerated)',
      ]);
      expect(puts()).toEqual([{ url: svc.svc.webhook({ boardId: board })!.url, secret: SECRET }]);
      expect(svc.svc.webhook({ boardId: board })).toMatchObject({ enabled: true });
      expect(`${result.stdout}${result.stderr}`).not.toContain(`board=${board}`);
    });

    it('takes the host in any case, with spaces around it', async () => {
      await disable();
      const result = await runCli(['board-webhook', 'reenable', board], { env, stdin: terminal('  Hooks.Example.COM \n') });
      expect(result.code).toBe(0);
      expect(puts()).toHaveLength(1);
    });

    it.each<[string, string]>([
      ['"yes"', 'yes\n'],
      ['another host', 'evil.example.net\n'],
      ['the whole URL', `${URL}\n`],
      ['an empty line', '\n'],
      ['nothing: the input ends', ''],
    ])('anything else refuses: %s; exit 1, no ping, no PUT', async (_name, typed) => {
      await disable();
      const result = await runCli(['board-webhook', 'reenable', board], { env, stdin: terminal(typed) });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`${PROMPT}svc-webhooks board-webhook: not re-enabled: the URL svc holds was not confirmed; nothing was sent\n`);
      expect(result.stdout).toBe('');
      expect(svc.requests().map((r) => r.method)).toEqual(['GET', 'GET']);
      expect(svc.svc.webhook({ boardId: board })).toMatchObject({ enabled: false });
    });

    it("never shows the credentials or the query of svc's URL in the question", async () => {
      await disable();
      svc.svc.injectApiFault({
        fields: { url: 'https://hook-user:hook-password-123@evil.example.net/in?token=query-token-456' },
        method: 'GET',
        on: { boardId: board },
      });
      const result = await runCli(['board-webhook', 'reenable', board], { env, stdin: terminal('no\n') });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        'svc holds https://evil.example.net/in?…: re-enabling sends your webhook secret there.\nType its host, evil.example.net,',
      );
      for (const hidden of ['hook-user', 'hook-password-123', 'query-token-456', SECRET]) expect(`${result.stdout}${result.stderr}`).not.toContain(hidden);
      expect(puts()).toEqual([]);
    });

    it('a URL svc changed after the question was asked is refused: nothing PUT where the user did not confirm', async () => {
      await disable();
      const stdin = Object.assign(new PassThrough(), { isTTY: true });
      const running = runCli(['board-webhook', 'reenable', board], { env, stdin });
      // Asked: both GETs (the state, then its URL for the question) were made.
      while (svc.requests().filter((r) => r.method === 'GET').length < 2) await new Promise((r) => setTimeout(r, 10));
      svc.svc.injectApiFault({ fields: { url: 'https://evil.example.net/webhooks/board' }, method: 'GET', on: { boardId: board } });
      stdin.end('hooks.example.com\n');
      const result = await running;
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('not re-enabled: svc holds https://evil.example.net/webhooks/board, not https://hooks.example.com/webhooks/board');
      expect(puts()).toEqual([]);
    });

    it('stdin not a terminal (a pipe, a script): refused as before, nothing asked, nothing read', async () => {
      await disable();
      const stdin = terminal('hooks.example.com\n', false);
      const result = await runCli(['board-webhook', 'reenable', board], { env, stdin });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe(
        `not re-enabled: svc holds ${URL}?…; the PUT would send your secret there: confirm it is your receiver's with --url <that URL>\n`,
      );
      expect(result.stderr).not.toContain('Type its host');
      expect(stdin.read()?.toString()).toBe('hooks.example.com\n');
      expect(puts()).toEqual([]);
    });

    it('with --url, never asks: another URL is refused as before', async () => {
      await disable();
      const result = await runCli(['board-webhook', 'reenable', board, '--url', 'https://evil.example.net/webhooks/board'], {
        env,
        stdin: terminal('hooks.example.com\n'),
      });
      expect(result.code).toBe(1);
      expect(result.stderr).not.toContain('Type its host');
      expect(puts()).toEqual([]);
    });

    it('not disabled: nothing to do, nothing asked', async () => {
      const result = await runCli(['board-webhook', 'reenable', board], { env, stdin: terminal('hooks.example.com\n') });
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(puts()).toEqual([]);
    });
  });
});
