import { SvcClient } from '../../src/client';
import { watchWebhooks, type WatchOptions } from '../../src/watch';
import { watchSettings } from '../../src/watch/watch-options';

const client = new SvcClient({ baseUrl: 'https://acme.svc.example.com', token: 'person-token-0123456789' });
const SECRET = 'the-receivers-board-secret-0123456789';
const HOOK_URL = 'https://hooks.example.com/webhooks/board';

function setup(options: Record<string, unknown>): () => unknown {
  return () => watchSettings({ client, boards: ['b1'], ...options });
}

describe('watchWebhooks options: checked once, at setup, each error naming the option', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['no client', { client: undefined }, /`client` must be an SvcClient/],
    ['a client that is not one', { client: {} }, /`client` must be an SvcClient/],
    ['neither boards nor bot', { boards: undefined }, /needs `boards`.*`bot`/],
    ['boards not a list', { boards: 'b1' }, /`boards` must be an array of board ids or a function/],
    ['boards with a number', { boards: ['b1', 2] }, /`boards` must be an array/],
    ['bot not a boolean nor an object', { bot: 'yes' }, /`bot` must be true, false or \{ client, secret, expectUrl \}/],
    ['bot with an unknown option', { bot: { token: 'x' } }, /`bot` has no option `token`/],
    ['bot.secret too short', { bot: { secret: 'short' } }, /`bot.secret` is not a webhook secret svc takes: it must be 16 to 256 characters long/],
    ['secret too short', { secret: 'short' }, /`secret` is not a webhook secret svc takes/],
    [
      'secret an svc token',
      { secret: `svc_bot_${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}_${'A'.repeat(43)}` },
      /`secret` is not a webhook secret svc takes: it is an svc token/,
    ],
    ['secret an empty list', { secret: [] }, /`secret` must be the webhook secret, several, or a resolver/],
    ['secret list with a bad one', { secret: [SECRET, 'short'] }, /`secret\[1\]`/],
    ['reenable without a secret', { reenable: true, expectUrl: HOOK_URL }, /`reenable` needs `secret`.*generate a new secret/],
    ['reenable for the bot without its secret', { boards: undefined, bot: true, reenable: true }, /`reenable` needs `bot.secret`/],
    ['reenable without expectUrl: the secret would go wherever svc points', { reenable: true, secret: SECRET }, /`reenable` needs `expectUrl`/],
    [
      'reenable for the bot without its expected URL',
      { boards: undefined, bot: { secret: SECRET }, reenable: true, expectUrl: HOOK_URL },
      /`reenable` needs `bot.expectUrl` \(or an `expectUrl` function\)/,
    ],
    [
      'expectUrl not a URL',
      { expectUrl: 'hooks.example.com/webhooks/board' },
      /`expectUrl` must be the https:\/\/ URL svc should deliver to.*not an absolute URL/,
    ],
    ['expectUrl over http', { expectUrl: 'http://hooks.example.com/webhooks/board' }, /`expectUrl` must be the https:\/\/ URL.*must use https:\/\//],
    ['expectUrl to loopback', { expectUrl: 'https://127.0.0.1/webhooks/board' }, /`expectUrl` must be the https:\/\/ URL.*loopback/],
    ['expectUrl a number', { expectUrl: 443 }, /`expectUrl` must be the https:\/\/ URL/],
    ['bot.expectUrl to a private network', { bot: { expectUrl: 'https://10.0.0.5/bot' } }, /`bot.expectUrl` must be the https:\/\/ URL.*private range/],
    ['reenable not a boolean', { reenable: 'yes' }, /`reenable` must be true or false/],
    ['intervalMs zero', { intervalMs: 0 }, /`intervalMs` must be an integer of milliseconds from 10/],
    ['intervalMs in seconds by mistake? a fraction', { intervalMs: 2.5 }, /`intervalMs` must be an integer/],
    ['maxInFlight zero', { maxInFlight: 0 }, /`maxInFlight` must be an integer from 1 to 256/],
    ['maxRequestsPerSecond negative', { maxRequestsPerSecond: -1 }, /`maxRequestsPerSecond`/],
    ['onChange not a function', { onChange: 'log' }, /`onChange` must be a function/],
    ['logger without warn', { logger: { info() {} } }, /`logger` must be a pino logger, an object with info, warn and error/],
    ['probe not a function', { probe: true }, /`probe` must be a function/],
    ['an unknown option, misspelt', { interval: 1000 }, /watchWebhooks has no option `interval`; did you mean `intervalMs`\?/],
  ])('%s', (_name, options, message) => {
    expect(setup(options)).toThrow(message);
    try {
      setup(options)();
    } catch (err) {
      expect(err).toBeInstanceOf(err instanceof RangeError ? RangeError : TypeError);
      // The value of a secret is never quoted back.
      expect(String((err as Error).message)).not.toContain('A'.repeat(43));
    }
  });

  it('the defaults: 5 min interval, 30 min for 404s, 8 in flight, 50 per second, list refreshed every interval', () => {
    expect(watchSettings({ client, boards: ['b1'] })).toMatchObject({
      intervalMs: 300_000,
      missingIntervalMs: 1_800_000,
      boardsRefreshMs: 300_000,
      maxInFlight: 8,
      maxRequestsPerSecond: 50,
      reenable: false,
      reenableBackoffMs: 60_000,
    });
  });

  it('bot: true watches the bot through `client`; { client } through its own', () => {
    const other = new SvcClient({ baseUrl: 'https://acme.svc.example.com' });
    expect(watchSettings({ client, bot: true }).bot?.client).toBe(client);
    expect(watchSettings({ client, bot: { client: other } }).bot?.client).toBe(other);
    expect(watchSettings({ client, boards: ['b1'], bot: false }).bot).toBeUndefined();
  });

  it('reenable with expectUrl: a fixed URL for the boards and bot.expectUrl, or one function for both', () => {
    expect(
      watchSettings({ client, boards: ['b1'], bot: { secret: SECRET, expectUrl: `${HOOK_URL}/bot` }, secret: SECRET, expectUrl: HOOK_URL, reenable: true }),
    ).toMatchObject({
      expectUrl: HOOK_URL,
      bot: { expectUrl: `${HOOK_URL}/bot` },
    });
    const perWebhook = () => HOOK_URL;
    expect(watchSettings({ client, boards: ['b1'], bot: { secret: SECRET }, secret: SECRET, expectUrl: perWebhook, reenable: true }).expectUrl).toBe(
      perWebhook,
    );
  });

  it('the public factory checks before it polls', () => {
    expect(() => watchWebhooks({ client } as WatchOptions)).toThrow(TypeError);
  });
});
