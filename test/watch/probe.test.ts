import { SvcClientError, type PingResult } from '../../src/client';
import { type WatchClient } from '../../src/watch';
import { probe } from '../../src/watch/probe';

const BOARD = { webhook: 'board', boardId: 'b1', url: 'https://hooks.example.com/b' } as const;
const BOT = { webhook: 'bot', url: 'https://bot.example.com/webhooks/bot' } as const;

function pinging(answer: () => Promise<PingResult>): WatchClient {
  return { pingBoardWebhook: answer } as unknown as WatchClient;
}

const answering = (status: number): typeof fetch => (async () => new Response('{}', { status })) as typeof fetch;

describe('probe: does the receiver answer, before a re-enable', () => {
  it.each<[string, () => Promise<PingResult>, string]>([
    ["svc's ping answered 2xx", async () => ({ ok: true, status: 204, error: '' }), 'answered'],
    ["svc's ping answered 500", async () => ({ ok: false, status: 500, error: 'receiver answered 500' }), 'failed'],
    ["svc's ping did not reach it", async () => ({ ok: false, status: 0, error: 'connection refused' }), 'failed'],
    ['svc failing the ping route', async () => Promise.reject(new SvcClientError('svc_api_error', 'svc answered 502', { status: 502 })), 'failed'],
  ])('a board: %s', async (_name, answer, kind) => {
    expect((await probe({ target: BOARD, client: pinging(answer), custom: undefined, fetch })).kind).toBe(kind);
  });

  it("a board: svc's 429 is a wait of its Retry-After, not a failure", async () => {
    const client = pinging(() => Promise.reject(new SvcClientError('rate_limited', 'ping at most once per 10 s', { status: 429, retryAfter: 7 })));
    expect(await probe({ target: BOARD, client, custom: undefined, fetch })).toEqual({ kind: 'wait', ms: 7_000 });
  });

  it.each<[number, string]>([
    [401, 'answered'],
    [400, 'answered'],
    [403, 'answered'],
    [200, 'answered'],
    [404, 'failed'],
    [302, 'failed'],
    [500, 'failed'],
    [503, 'failed'],
  ])('the bot: a POST without a signature answered %i → %s', async (status, kind) => {
    expect((await probe({ target: BOT, client: {} as WatchClient, custom: undefined, fetch: answering(status) })).kind).toBe(kind);
  });

  it.each<[string, RegExp]>([
    [
      'http://127.0.0.1:3000/webhooks/bot',
      /not probed: the bot URL svc holds, http:\/\/127\.0\.0\.1:3000\/webhooks\/bot, is not a public https:\/\/ URL \(it must use https/,
    ],
    ['https://127.0.0.1/webhooks/bot', /is not a public https:\/\/ URL \(it points to the loopback range/],
    ['https://[::1]/webhooks/bot', /loopback address ::1/],
    ['https://10.1.2.3/webhooks/bot', /private range 10\.0\.0\.0\/8/],
    ['https://169.254.169.254/latest/meta-data', /link-local range/],
    ['https://localhost/webhooks/bot', /local or private-network name/],
    ['http://bot.example.com/webhooks/bot', /it must use https:\/\//],
    ['https://user:bot-pass@10.0.0.1/hook?token=bot-query', /https:\/\/10\.0\.0\.1\/hook\?…/],
  ])('the bot: svc holding %s → failed, nothing POSTed', async (url, detail) => {
    const sent: string[] = [];
    const spy = (async (input: unknown) => {
      sent.push(String(input));
      return new Response('{}', { status: 401 });
    }) as typeof fetch;
    const found = await probe({ target: { webhook: 'bot', url }, client: {} as WatchClient, custom: undefined, fetch: spy });
    expect(found).toMatchObject({ kind: 'failed', detail: expect.stringMatching(detail) });
    expect(sent).toEqual([]);
    expect(JSON.stringify(found)).not.toMatch(/bot-pass|bot-query/);
  });

  it('the bot: a public https URL is POSTed to', async () => {
    const sent: string[] = [];
    const spy = (async (input: unknown) => {
      sent.push(String(input));
      return new Response('{}', { status: 401 });
    }) as typeof fetch;
    expect((await probe({ target: BOT, client: {} as WatchClient, custom: undefined, fetch: spy })).kind).toBe('answered');
    expect(sent).toEqual([BOT.url]);
  });

  it('the bot: no answer at all → failed', async () => {
    const refused = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    expect(await probe({ target: BOT, client: {} as WatchClient, custom: undefined, fetch: refused })).toMatchObject({
      kind: 'failed',
      detail: 'fetch failed',
    });
  });

  it.each<[string, () => unknown, string]>([
    ['true', () => true, 'answered'],
    ['a promise of true', async () => true, 'answered'],
    ['false', () => false, 'failed'],
    ['something truthy that is not true', () => 'yes', 'failed'],
    [
      'a throw',
      () => {
        throw new Error('health check down');
      },
      'failed',
    ],
  ])('your probe answering %s → %s, whatever the webhook', async (_name, custom, kind) => {
    for (const target of [BOARD, BOT]) expect((await probe({ target, client: {} as WatchClient, custom, fetch })).kind).toBe(kind);
  });

  it('your probe that never answers is given up after 10 s', async () => {
    jest.useFakeTimers();
    try {
      const found = probe({ target: BOARD, client: {} as WatchClient, custom: () => new Promise(() => undefined), fetch });
      await jest.advanceTimersByTimeAsync(10_000);
      expect(await found).toMatchObject({ kind: 'failed', detail: expect.stringMatching(/your probe did not answer within 10000 ms/) });
    } finally {
      jest.useRealTimers();
    }
  });
});
