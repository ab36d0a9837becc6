import { inspect } from 'node:util';
import express from 'express';
import { svcBoardWebhook, type BoardWebhookMiddleware } from '../../src';
import { SvcClient, SvcClientError } from '../../src/client';
import { createFakeSvc, silentLogger, type FakeSvc } from '../../src/testing';
import { listen } from '../cli/listen';

const HOOK_URL = 'https://hooks.example.com/webhooks/board';
const BOT_URL = 'https://bot.example.com/webhooks/bot';
const SECRET = 'client-test-secret-0123456789';

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<SvcClientError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof SvcClientError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('SvcClient', () => {
  let svc: FakeSvc;
  let receiver: BoardWebhookMiddleware | undefined;
  let app: { url: string; close: () => Promise<void> };

  beforeAll(async () => {
    app = await listen(express().use((req, res, next) => (receiver ? receiver(req, res, next) : next())));
  });
  afterAll(() => app.close());
  beforeEach(async () => {
    svc = await createFakeSvc({ clock: 'manual', forward: { 'https://hooks.example.com': app.url }, versionInfo: { version: '1.42.0', commit: 'a1b2c3d' } });
    receiver = undefined;
  });
  afterEach(() => svc.close());

  const bot = (): SvcClient => new SvcClient({ baseUrl: svc.baseUrl, token: svc.bot.token });
  const person = (): SvcClient => new SvcClient({ baseUrl: svc.baseUrl, token: svc.person.token });

  describe('version()', () => {
    it('reads GET /api/version without a token', async () => {
      const info = await new SvcClient({ baseUrl: svc.baseUrl, token: svc.person.token }).version();
      expect(info).toMatchObject({ version: '1.42.0', commit: 'a1b2c3d', license: 'AGPL-3.0-only' });
      expect(svc.requests()[0]!.headers.authorization).toBeUndefined();
    });

    it('appends the route to a base path', async () => {
      const seen: string[] = [];
      const fetchSpy: typeof fetch = async (input) => {
        seen.push(String(input));
        return new Response('{"version":"x"}', { status: 200 });
      };
      await new SvcClient({ baseUrl: 'https://acme.example.com/svc/', fetch: fetchSpy }).version();
      expect(seen).toEqual(['https://acme.example.com/svc/api/version']);
    });
  });

  describe('bot webhook', () => {
    it('sets, gets and deletes, with the bot token in the Authorization header only', async () => {
      const state = await bot().setBotWebhook({ url: BOT_URL, secret: SECRET });
      expect(state).toMatchObject({ url: BOT_URL, enabled: true, disabledAt: null });
      expect(state).not.toHaveProperty('secret');
      expect(await bot().getBotWebhook()).toMatchObject({ url: BOT_URL, enabled: true });
      await bot().deleteBotWebhook();
      expect(await bot().getBotWebhook()).toBeNull();
      for (const request of svc.requests()) {
        expect(request.headers.authorization).toBe(`Bearer ${svc.bot.token}`);
        expect(request.url).not.toContain(svc.bot.token.slice(-43));
      }
      expect(JSON.parse(svc.requests()[0]!.body)).toEqual({ url: BOT_URL, secret: SECRET });
    });

    it('reads an unwrapped GET answer too', async () => {
      await svc.close();
      svc = await createFakeSvc({ botGetWrapped: false });
      await bot().setBotWebhook({ url: BOT_URL, secret: SECRET });
      expect(await bot().getBotWebhook()).toMatchObject({ url: BOT_URL, enabled: true });
    });

    it('refuses a token that is not a bot token before sending', async () => {
      const error = await failure(person().getBotWebhook());
      expect(error).toMatchObject({ code: 'invalid_token', status: undefined });
      expect(svc.requests()).toHaveLength(0);
    });

    it('refuses the bot token as the webhook secret', async () => {
      expect(await failure(bot().setBotWebhook({ url: BOT_URL, secret: svc.bot.token }))).toMatchObject({ code: 'invalid_secret' });
      expect(svc.requests()).toHaveLength(0);
    });
  });

  describe('board webhook', () => {
    it('returns a generated secret once, as generatedSecret', async () => {
      const { webhook, generatedSecret } = await person().setBoardWebhook(svc.board.id, { url: HOOK_URL });
      expect(generatedSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(svc.secretMatches({ boardId: svc.board.id }, generatedSecret!)).toBe(true);
      expect(webhook).toMatchObject({ url: HOOK_URL, hasSecret: true, enabled: true, pausedReason: null });
      expect(webhook).not.toHaveProperty('secret');
      const again = await person().getBoardWebhook(svc.board.id);
      expect(JSON.stringify(again)).not.toContain(generatedSecret);
    });

    it('sends a given secret and returns no generatedSecret', async () => {
      const result = await person().setBoardWebhook(svc.board.id, { url: HOOK_URL, secret: SECRET });
      expect(result.generatedSecret).toBeUndefined();
      expect(svc.secretMatches({ boardId: svc.board.id }, SECRET)).toBe(true);
    });

    it('pings: svc delivers a ping the receiver verifies', async () => {
      const { generatedSecret } = await person().setBoardWebhook(svc.board.id, { url: HOOK_URL });
      const pings: number[] = [];
      receiver = svcBoardWebhook({ secret: generatedSecret!, logger: silentLogger }).on('ping', (_event, ctx) => void pings.push(ctx.sequence));
      expect(await person().pingBoardWebhook(svc.board.id)).toEqual({ ok: true, status: 200, error: '' });
      expect(pings).toEqual([0]);
    });

    it('throws rate_limited with retryAfter for a second ping within 10 seconds', async () => {
      await person().setBoardWebhook(svc.board.id, { url: HOOK_URL, secret: SECRET });
      await person().pingBoardWebhook(svc.board.id);
      await svc.advance(4_000);
      const error = await failure(person().pingBoardWebhook(svc.board.id));
      expect(error).toMatchObject({ code: 'rate_limited', status: 429, retryAfter: 6 });
      await svc.advance(6_000);
      expect(await person().pingBoardWebhook(svc.board.id)).toMatchObject({ ok: false });
    });

    it('refuses a bot token for board routes', async () => {
      expect(await failure(bot().getBoardWebhook(svc.board.id))).toMatchObject({ code: 'invalid_token' });
      expect(svc.requests()).toHaveLength(0);
    });

    it('refuses an empty board id', async () => {
      expect(await failure(person().getBoardWebhook(' '))).toMatchObject({ code: 'invalid_board_id' });
    });

    it('encodes the board id into the path', async () => {
      // An unknown board answers 404, which GET reads as "no webhook".
      expect(await person().getBoardWebhook('a/b?c')).toBeNull();
      expect(svc.requests()[0]!.url).toBe('/api/boards/a%2Fb%3Fc/webhook');
    });
  });

  describe('checks inputs locally, before anything is sent', () => {
    it.each([
      ['an http url', { url: 'http://hooks.example.com/x', secret: SECRET }, 'invalid_url'],
      ['a private url', { url: 'https://10.0.0.8/x', secret: SECRET }, 'invalid_url'],
      ['a short secret', { url: HOOK_URL, secret: 'short' }, 'invalid_secret'],
    ])('%s', async (_case, input, code) => {
      expect(await failure(bot().setBotWebhook(input))).toMatchObject({ code, status: undefined });
      expect(await failure(person().setBoardWebhook(svc.board.id, input))).toMatchObject({ code });
      expect(svc.requests()).toHaveLength(0);
    });
  });

  describe('errors', () => {
    it('throws svc_api_error with the status for a refused token', async () => {
      const forged = `${svc.bot.token.slice(0, -1)}${svc.bot.token.endsWith('Q') ? 'R' : 'Q'}`;
      const client = new SvcClient({ baseUrl: svc.baseUrl, token: forged });
      const error = await failure(client.getBotWebhook());
      expect(error).toMatchObject({ code: 'svc_api_error', status: 401 });
      expect(error.message).not.toContain(svc.bot.token.slice(-43, -1));
    });

    it('does not follow a redirect, so the token cannot travel elsewhere', async () => {
      const elsewhere = await listen((req, res) => void res.end(JSON.stringify({ stolen: req.headers.authorization })));
      const redirecting = await listen((_req, res) => void res.writeHead(307, { location: `${elsewhere.url}/api/bots/me/webhook` }).end());
      try {
        const error = await failure(new SvcClient({ baseUrl: redirecting.url, token: svc.bot.token }).getBotWebhook());
        expect(error).toMatchObject({ code: 'svc_api_error', status: 307 });
      } finally {
        await Promise.all([elsewhere.close(), redirecting.close()]);
      }
    });

    it('throws timeout when svc does not answer in time', async () => {
      const silent = await listen(() => undefined);
      try {
        expect(await failure(new SvcClient({ baseUrl: silent.url, timeoutMs: 100 }).version())).toMatchObject({ code: 'timeout' });
      } finally {
        await silent.close();
      }
    });

    it('throws network_error when svc cannot be reached', async () => {
      const gone = await listen(() => undefined);
      await gone.close();
      expect(await failure(new SvcClient({ baseUrl: gone.url }).version())).toMatchObject({ code: 'network_error', status: undefined });
    });

    it.each([
      ['not a URL', 'acme.example.com'],
      ['ftp', 'ftp://acme.example.com'],
      ['a query', 'https://acme.example.com/?token=x'],
      ['credentials', 'https://user:pass@acme.example.com'],
    ])('refuses a base url with %s', (_case, baseUrl) => {
      expect(() => new SvcClient({ baseUrl })).toThrow(expect.objectContaining({ code: 'invalid_base_url' }));
    });

    it.each([
      ['an OAuth access token', `svc_oa_${'a'.repeat(43)}`],
      ['an OAuth refresh token', `svc_or_${'a'.repeat(43)}`],
      ['a token with a newline', 'abc\ndef'],
      ['an empty token', ''],
    ])('refuses %s at construction', (_case, token) => {
      expect(() => new SvcClient({ baseUrl: 'https://acme.example.com', token })).toThrow(expect.objectContaining({ code: 'invalid_token' }));
    });
  });

  it('keeps the token out of inspect and JSON output', () => {
    const client = bot();
    expect(inspect(client, { depth: 5, showHidden: true })).not.toContain(svc.bot.token);
    expect(JSON.stringify(client)).not.toContain(svc.bot.token);
  });
});

describe('SvcClient input checks', () => {
  const client = new SvcClient({ baseUrl: 'https://acme.example.com', token: 'person-token-0123456789' });

  it('throws a typed error, not a TypeError, for a missing input', async () => {
    await expect(client.setBoardWebhook('b', undefined as never)).rejects.toMatchObject({ code: 'invalid_url' });
  });

  it('refuses the caller token as a board webhook secret', async () => {
    await expect(client.setBoardWebhook('b', { url: HOOK_URL, secret: 'person-token-0123456789' })).rejects.toMatchObject({ code: 'invalid_secret' });
  });

  it('refuses a token that cannot go in an Authorization header (not printable ASCII) as invalid_token, before sending', () => {
    for (const token of ['person-tokén-0123456789', 'person-token-0123456789\u2028', 'person\u00a0token-0123456789']) {
      expect(() => new SvcClient({ baseUrl: 'https://acme.example.com', token })).toThrow(expect.objectContaining({ code: 'invalid_token' }));
    }
  });

  it('refuses a base URL ending in an empty query or fragment, which the routes would follow', () => {
    for (const baseUrl of ['https://acme.example.com/?', 'https://acme.example.com/#', 'https://acme.example.com/svc?#']) {
      expect(() => new SvcClient({ baseUrl, token: 'person-token-0123456789' })).toThrow(expect.objectContaining({ code: 'invalid_base_url' }));
    }
  });

  it('refuses board ids that would change the route (".", "..") or carry spaces around them', async () => {
    for (const id of ['.', '..', ' b1', 'b1 ']) await expect(client.getBoardWebhook(id)).rejects.toMatchObject({ code: 'invalid_board_id' });
  });

  it('takes a timeout in whole milliseconds a timer can hold, and refuses others at construction', () => {
    expect(() => new SvcClient({ baseUrl: 'https://acme.example.com', timeoutMs: 2_147_483_647 })).not.toThrow();
    for (const timeoutMs of [1500.5, 2_147_483_648, 0, -1, Number.NaN]) {
      expect(() => new SvcClient({ baseUrl: 'https://acme.example.com', timeoutMs })).toThrow(RangeError);
    }
  });

  it("cuts the secret from svc's error message however its JSON encoder escaped it (\\u forms)", async () => {
    const secret = 'webhook-secret-é<&>-0123456789abcdef';
    const escaped = `bad secret ${secret}`.replace(/[^\x20-\x7e]|[<&>]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const echo = (async () => new Response(`{"message":"${escaped}"}`, { status: 400 })) as typeof fetch;
    const echoing = new SvcClient({ baseUrl: 'https://acme.example.com', token: 'person-token-0123456789', fetch: echo });
    const error = await failure(echoing.setBoardWebhook('b1', { url: HOOK_URL, secret }));
    expect(error.message).toContain('bad secret [redacted]');
    expect(error.message).not.toContain(secret);
  });
});
