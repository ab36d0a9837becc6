import { createFakeSvc, type FakeSvc } from '../../src/testing';
import { expectOneLine, runCli, spawnCli, tempFiles, type CliResult } from './run-cli';

const URL = 'https://bot.example.com/webhooks/bot';
const SECRET = 'bot-webhook-secret-0123456789';
const DAY_MS = 24 * 60 * 60 * 1000;

describe('svc-webhooks bot-webhook', () => {
  let svc: FakeSvc;
  let env: Record<string, string>;
  beforeEach(async () => {
    svc = await createFakeSvc({ clock: 'manual' });
    env = { SVC_BOT_TOKEN: svc.bot.token, SVC_BASE_URL: svc.baseUrl };
  });
  afterEach(() => svc.close());

  /** The token's secret part never reaches the output or a URL. */
  function expectNoToken(result: CliResult): void {
    const secretPart = svc.bot.token.slice(-37);
    expect(result.stdout + result.stderr).not.toContain(secretPart);
    for (const request of svc.requests()) expect(request.url).not.toContain(secretPart);
  }

  describe('set', () => {
    it('registers the webhook with the bot token and prints the state, through the real launcher', async () => {
      const result = await spawnCli(['bot-webhook', 'set', '--url', URL], { env: { ...env, SVC_WEBHOOK_SECRET: SECRET } });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`bot webhook set (bot ${svc.bot.id}, token svc_bot_${svc.bot.id}_${svc.bot.token.slice(-43, -37)}…[redacted]):`);
      expect(result.stdout).toMatch(/url\s+https:\/\/bot\.example\.com\/webhooks\/bot/);
      expect(result.stdout).toMatch(/enabled\s+yes/);
      expect(result.stdout).not.toContain(SECRET);
      expect(svc.webhook({ botId: svc.bot.id })).toMatchObject({ url: URL, enabled: true });
      expect(svc.secretMatches({ botId: svc.bot.id }, SECRET)).toBe(true);
      expect(svc.requests()[0]!.headers.authorization).toBe(`Bearer ${svc.bot.token}`);
      expectNoToken(result);
    });

    it('re-enables a disabled webhook', async () => {
      await runCli(['bot-webhook', 'set', '--url', URL], { env: { ...env, SVC_WEBHOOK_SECRET: SECRET } });
      // svc disables it after a day of failed deliveries (the emulator sends nothing beyond this machine).
      svc.emitBotUpdate({ kind: 'messageCreate' });
      await svc.advance(DAY_MS);
      expect(svc.webhook({ botId: svc.bot.id })).toMatchObject({ enabled: false });
      const result = await runCli(['bot-webhook', 'set', '--url', URL, '--json'], { env: { ...env, SVC_WEBHOOK_SECRET: SECRET } });
      expect(JSON.parse(result.stdout)).toMatchObject({ url: URL, enabled: true, disabledAt: null });
    });

    it('reads the token and the secret from files', async () => {
      const files = tempFiles({ token: `${svc.bot.token}\n`, secret: `${SECRET}\n` });
      try {
        const args = [
          'bot-webhook',
          'set',
          '--url',
          URL,
          '--secret-file',
          files.path('secret'),
          '--token-file',
          files.path('token'),
          '--base-url',
          svc.baseUrl,
        ];
        const result = await runCli(args);
        expect(result.code).toBe(0);
        expect(svc.secretMatches({ botId: svc.bot.id }, SECRET)).toBe(true);
      } finally {
        files.cleanup();
      }
    });

    it('takes the secret from SVC_WEBHOOK_SECRET when no option gives one', async () => {
      const result = await runCli(['bot-webhook', 'set', '--url', URL], { env: { ...env, SVC_WEBHOOK_SECRET: SECRET } });
      expect(result.code).toBe(0);
      expect(svc.secretMatches({ botId: svc.bot.id }, SECRET)).toBe(true);
    });

    describe('refuses locally, before anything is sent (exit 2)', () => {
      it.each([
        ['an http url', ['--url', 'http://bot.example.com/hook'], SECRET, 'must use https://'],
        ['localhost', ['--url', 'https://localhost/hook'], SECRET, 'local or private-network name'],
        ['a private address', ['--url', 'https://192.168.1.20/hook'], SECRET, 'private range 192.168.0.0/16'],
        ['a loopback address', ['--url', 'https://127.0.0.1:8443/hook'], SECRET, 'loopback range'],
        ['an IPv6 unique local address', ['--url', 'https://[fd12::1]/hook'], SECRET, 'unique local range'],
        ['a short secret', ['--url', URL], 'too-short', '16 to 256 characters'],
        ['a long secret', ['--url', URL], 'x'.repeat(257), '16 to 256 characters'],
        ['no secret', ['--url', URL], undefined, 'the webhook secret is required'],
        ['no url', [], SECRET, 'needs --url'],
        ['the secret on the command line (visible in ps)', ['--url', URL, '--secret', SECRET], undefined, '--secret-file'],
      ])('%s', async (_case, extra, secret, message) => {
        const result = await runCli(['bot-webhook', 'set', ...extra], { env: { ...env, SVC_WEBHOOK_SECRET: secret } });
        expect(result.code).toBe(2);
        expectOneLine(result.stderr);
        expect(result.stderr).toContain(message);
        expect(svc.requests()).toHaveLength(0);
      });

      it('the bot token itself as the secret', async () => {
        const result = await runCli(['bot-webhook', 'set', '--url', URL], { env: { ...env, SVC_WEBHOOK_SECRET: svc.bot.token } });
        expect(result.code).toBe(2);
        expect(result.stderr).toContain('invalid_secret');
        expect(svc.requests()).toHaveLength(0);
        expectNoToken(result);
      });
    });
  });

  describe('get', () => {
    it('prints the state, wrapped in `webhook` or not', async () => {
      await runCli(['bot-webhook', 'set', '--url', URL], { env: { ...env, SVC_WEBHOOK_SECRET: SECRET } });
      const wrapped = await runCli(['bot-webhook', 'get'], { env });
      expect(wrapped.stdout).toMatch(/url\s+https:\/\/bot\.example\.com/);
      await svc.close();
      svc = await createFakeSvc({ botGetWrapped: false });
      env = { SVC_BOT_TOKEN: svc.bot.token, SVC_BASE_URL: svc.baseUrl };
      await runCli(['bot-webhook', 'set', '--url', URL], { env: { ...env, SVC_WEBHOOK_SECRET: SECRET } });
      const bare = await runCli(['bot-webhook', 'get', '--json'], { env });
      expect(JSON.parse(bare.stdout)).toMatchObject({ url: URL, enabled: true });
    });

    it('says so when no webhook is set', async () => {
      const result = await spawnCli(['bot-webhook', 'get'], { env });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('no bot webhook is set');
    });
  });

  describe('delete', () => {
    it('removes the webhook', async () => {
      await runCli(['bot-webhook', 'set', '--url', URL], { env: { ...env, SVC_WEBHOOK_SECRET: SECRET } });
      const result = await runCli(['bot-webhook', 'delete'], { env });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('bot webhook deleted');
      expect(svc.webhook({ botId: svc.bot.id })).toBeUndefined();
    });
  });

  describe('errors', () => {
    it('exits 1 with one line when svc refuses the token, never printing it', async () => {
      const forged = `${svc.bot.token.slice(0, -43)}${'Z'.repeat(43)}`;
      const result = await spawnCli(['bot-webhook', 'get'], { env: { ...env, SVC_BOT_TOKEN: forged } });
      expect(result.code).toBe(1);
      expectOneLine(result.stderr);
      expect(result.stderr).toContain('svc_api_error: GET /api/bots/me/webhook: svc answered 401');
      expect(result.stderr).not.toContain('Z'.repeat(7));
    });

    it('exits 1 when svc cannot be reached', async () => {
      const base = svc.baseUrl;
      await svc.close();
      const result = await runCli(['bot-webhook', 'get'], { env: { ...env, SVC_BASE_URL: base } });
      svc = await createFakeSvc();
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('network_error');
    });

    type Case = (svc: FakeSvc) => { env?: Record<string, string | undefined>; args?: string[] };
    it.each<[string, Case, string]>([
      ['no token', () => ({ env: { SVC_BOT_TOKEN: undefined } }), 'set SVC_BOT_TOKEN or pass --token-file'],
      ['not a bot token', () => ({ env: { SVC_BOT_TOKEN: 'person-token-123' } }), 'need a bot token: a bot token starts with svc_bot_'],
      ['an OAuth access token', () => ({ env: { SVC_BOT_TOKEN: `svc_oa_${'q'.repeat(43)}` } }), 'not accepted by the svc REST API'],
      ['a bot token with an uppercase id', (s) => ({ env: { SVC_BOT_TOKEN: s.bot.token.replace(s.bot.id, s.bot.id.toUpperCase()) } }), 'lowercase hexadecimal'],
      ['no base url', () => ({ env: { SVC_BASE_URL: undefined } }), 'pass --base-url or set SVC_BASE_URL'],
      ['a token on the command line', () => ({ args: ['bot-webhook', 'get', '--token', 'abc'] }), '--token is not accepted'],
      ['an unknown action', () => ({ args: ['bot-webhook', 'list'] }), 'the action must be one of set, get, delete'],
      ['--url on get', () => ({ args: ['bot-webhook', 'get', '--url', URL] }), '--url and --secret-file belong to bot-webhook set'],
    ])('exits 2 for %s', async (_case, make, message) => {
      const change = make(svc);
      const result = await runCli(change.args ?? ['bot-webhook', 'get'], { env: { ...env, ...change.env } });
      expect(result.code).toBe(2);
      expectOneLine(result.stderr);
      expect(result.stderr).toContain(message);
      expect(svc.requests()).toHaveLength(0);
      expectNoToken(result);
    });
  });
});
