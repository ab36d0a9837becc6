import express from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { svcBoardWebhook, svcBotWebhook } from '../../src';
import { retryDelays } from '../../src/cli/retry-schedule';
import { boardEvent, silentLogger } from '../../src/testing';
import { listen } from './listen';
import { expectOneLine, runCli, spawnCli, tempFiles } from './run-cli';

const BOARD_SECRET = 'send-test-board-secret-0123456789';
const BOT_SECRET = 'send-test-bot-secret-0123456789ab';

describe('svc-webhooks send', () => {
  let server: { url: string; close: () => Promise<void> };
  const seen: string[] = [];
  let failuresLeft = 0;

  beforeAll(async () => {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger })
      .on('task.created', (event) => void seen.push(`board ${event.type} ${event.task.key}`))
      .onAny((event) => {
        if (event.type === 'task.updated' && failuresLeft-- > 0) throw new Error('not yet');
      });
    const bot = svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger }).command(
      'deploy',
      (data) => void seen.push(`bot /deploy ${data.message.command.args}`),
    );
    const app = express().use(board).use(bot);
    app.post('/moved', (_req, res) => void res.redirect(302, '/webhooks/board'));
    app.post('/slow', (_req, res) => void setTimeout(() => res.sendStatus(200), 1_000));
    app.post(
      '/hostile',
      (_req, res) => void res.status(400).json({ ok: false, code: 'bad', message: `\u001b[31mred\u001b[0m\u202e\r\nforged line ${'x'.repeat(1000)}` }),
    );
    server = await listen(app);
  });
  afterAll(() => server.close());
  beforeEach(() => {
    seen.length = 0;
  });

  describe('with an example name', () => {
    it('delivers a board example to svcBoardWebhook through the real launcher', async () => {
      const result = await spawnCli(['send', 'task.created', '--url', `${server.url}/webhooks/board`, '--secret', BOARD_SECRET]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/board task\.created, id [0-9a-f-]{36}/);
      expect(result.stdout).toMatch(/attempt 1: 200 ok in \d+/);
      expect(seen).toEqual(['board task.created ENG-42']);
    });

    it('delivers a bot command to svcBotWebhook', async () => {
      const result = await runCli(['send', 'messageCreate.command', '--url', `${server.url}/webhooks/bot`, '--secret', BOT_SECRET]);
      expect(result.code).toBe(0);
      expect(seen).toEqual(['bot /deploy production --force']);
    });

    it('gives every send a fresh delivery id, so none is a duplicate', async () => {
      const args = ['send', 'task.created', '--url', `${server.url}/webhooks/board`, '--secret', BOARD_SECRET];
      const first = await runCli(args);
      const second = await runCli(args);
      expect(first.stdout.match(/id (\S+)/)![1]).not.toBe(second.stdout.match(/id (\S+)/)![1]);
      expect(seen).toHaveLength(2);
    });

    it("reads the receiver's own variable: SVC_BOARD_WEBHOOK_SECRET for a board event, SVC_BOT_WEBHOOK_SECRET for a bot update", async () => {
      const env = { SVC_BOARD_WEBHOOK_SECRET: BOARD_SECRET, SVC_BOT_WEBHOOK_SECRET: BOT_SECRET };
      expect((await runCli(['send', 'task.created', '--url', `${server.url}/webhooks/board`], { env })).code).toBe(0);
      expect((await runCli(['send', 'messageCreate.command', '--url', `${server.url}/webhooks/bot`], { env })).code).toBe(0);
      expect(seen).toEqual(['board task.created ENG-42', expect.stringMatching(/^bot \/deploy /)]);
    });

    it('reads the secret from SVC_WEBHOOK_SECRET', async () => {
      const result = await runCli(['send', 'ping', '--url', `${server.url}/webhooks/board`], { env: { SVC_WEBHOOK_SECRET: BOARD_SECRET } });
      expect(result.code).toBe(0);
    });
  });

  describe('with a JSON file', () => {
    const event = boardEvent('task.created');
    const body = `${JSON.stringify(event, null, 2)}\n`;
    const files = tempFiles({ 'event.json': body, 'broken.json': '{"id": ' });
    afterAll(() => files.cleanup());

    it('sends the file byte for byte, so a repeat is answered, and shown, as a duplicate', async () => {
      const args = ['send', files.path('event.json'), '--url', `${server.url}/webhooks/board`, '--secret', BOARD_SECRET];
      const first = await runCli(args);
      const repeat = await runCli(args);
      expect([first.code, repeat.code]).toEqual([0, 0]);
      expect(first.stdout).toMatch(/attempt 1: 200 ok in \d+ ms\ndelivered\n/);
      expect(repeat.stdout).toMatch(/attempt 1: 200 ok, a duplicate in \d+ ms\ndelivered \(a duplicate: the receiver had this delivery id already\)\n/);
      expect(seen).toHaveLength(1);
    });

    it('gives the file a new id with --fresh', async () => {
      const args = ['send', files.path('event.json'), '--fresh', '--url', `${server.url}/webhooks/board`, '--secret', BOARD_SECRET];
      const result = await runCli(args);
      expect(result.code).toBe(0);
      expect(result.stdout).not.toContain(event.id);
      expect(seen).toHaveLength(1);
    });

    it('sends a body that is not JSON when told the webhook, and prints the receiver code', async () => {
      const result = await runCli(['send', files.path('broken.json'), '--webhook', 'board', '--url', `${server.url}/webhooks/board`, '--secret', BOARD_SECRET]);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/attempt 1: 400 invalid_json/);
    });
  });

  describe('like the real sender', () => {
    it('sends the headers svc sends, with a valid signature', async () => {
      let headers: IncomingHttpHeaders = {};
      const capture = await listen((req, res) => {
        headers = req.headers;
        req.resume().on('end', () => res.end());
      });
      try {
        await runCli(['send', 'task.updated', '--url', capture.url, '--secret', BOARD_SECRET]);
        expect(headers).toMatchObject({
          'content-type': 'application/json',
          'user-agent': 'Svc-Webhook/1.0',
          'x-svc-webhook-version': '1',
          'x-svc-event': 'task.updated',
          'x-svc-delivery': expect.stringMatching(/^[0-9a-f-]{36}$/),
          'x-svc-timestamp': expect.stringMatching(/^\d{10}$/),
          'x-svc-signature': expect.stringMatching(/^v1=[0-9a-f]{64}$/),
        });
        await runCli(['send', 'botCallback', '--url', capture.url, '--secret', BOT_SECRET]);
        expect(headers).toMatchObject({
          'user-agent': 'SvcBot-Webhook/1.0',
          'x-svc-signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
        });
        expect(headers['x-svc-timestamp']).toBeUndefined();
      } finally {
        await capture.close();
      }
    });

    it('does not follow a redirect and counts it as a failure', async () => {
      const result = await runCli(['send', 'task.created', '--url', `${server.url}/moved`, '--secret', BOARD_SECRET]);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/302 redirect to \/webhooks\/board, not followed/);
      expect(seen).toEqual([]);
    });

    it('gives up on a receiver that does not answer within the deadline', async () => {
      const result = await runCli(['send', 'ping', '--url', `${server.url}/slow`, '--secret', BOARD_SECRET, '--timeout', '100']);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/no answer within 100 ms/);
      expectOneLine(result.stderr);
    });

    it('reports a refused connection', async () => {
      const closed = await listen(() => undefined);
      await closed.close();
      const result = await runCli(['send', 'ping', '--url', closed.url, '--secret', BOARD_SECRET]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/connection failed \(ECONNREFUSED\)/);
      const port = new URL(closed.url).port;
      expect(result.stdout).toContain(`hint: nothing accepts connections at 127.0.0.1:${port}: is the receiver running, and listening on port ${port}?`);
    });
  });

  describe('when the delivery fails', () => {
    it('prints the status and the receiver code, and exits 1 with one line', async () => {
      const result = await spawnCli(['send', 'task.created', '--url', `${server.url}/webhooks/board`, '--secret', 'not-the-right-secret-0123']);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/attempt 1: 401 signature_mismatch in \d+/);
      expectOneLine(result.stderr);
      expect(result.stderr).toContain('the delivery failed: 401 signature_mismatch');
    });

    it("prints the receiver's message and, for a wrong secret, the verify command to run, never the secret or signature", async () => {
      const wrongSecret = 'not-the-right-secret-0123';
      // What the receiver answers a forged delivery, asked directly: the CLI must print its message.
      const probe = await fetch(`${server.url}/webhooks/board`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Svc-Timestamp': String(Math.floor(Date.now() / 1000)),
          'X-Svc-Signature': `v1=${'0'.repeat(64)}`,
        },
        body: '{}',
      });
      const { message } = (await probe.json()) as { message: string };

      const result = await runCli(['send', 'task.created', '--url', `${server.url}/webhooks/board`, '--secret', wrongSecret]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`  the receiver says: ${message}\n`);
      expect(result.stderr).toContain(`401 signature_mismatch: ${message}`);
      const hints = result.stdout.split('\n').filter((l) => l.startsWith('hint: '));
      expect(hints.some((h) => h.includes('secret'))).toBe(true);
      expect(hints.some((h) => /npx svc-webhooks verify --body \S+ --headers \S+ --secret /.test(h))).toBe(true);
      expect(result.stdout + result.stderr).not.toContain(wrongSecret);
      expect(result.stdout + result.stderr).not.toMatch(/[0-9a-f]{64}/);
    });

    it('hints at a wrong path or method on a 404', async () => {
      const result = await runCli(['send', 'task.created', '--url', `${server.url}/webhooks/boards`, '--secret', BOARD_SECRET]);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/attempt 1: 404 in \d+/);
      expect(result.stdout).toContain('hint: nothing takes POST /webhooks/boards there: check the path');
    });

    it("prints a hostile receiver's message without control or direction characters", async () => {
      const result = await runCli(['send', 'task.created', '--url', `${server.url}/hostile`, '--secret', BOARD_SECRET]);
      expect(result.code).toBe(1);
      const said = result.stdout.split('\n').find((l) => l.startsWith('  the receiver says: '))!;
      expect(said).toContain('red');
      // oxlint-disable-next-line no-control-regex -- control characters are what the output must not hold
      expect(said).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
      expect(said.length).toBeLessThan(400);
    });
  });

  describe('with --retry', () => {
    it("retries on svc's schedule until the receiver takes it", async () => {
      failuresLeft = 2;
      const result = await runCli(['send', 'task.updated', '--url', `${server.url}/webhooks/board`, '--secret', BOARD_SECRET, '--retry', '--fast', '600']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/attempt 1\/29 \(\+0\): 500 handler_failed/);
      expect(result.stdout).toMatch(/attempt 2\/29 \(\+1 min\): 500 handler_failed/);
      expect(result.stdout).toMatch(/attempt 3\/29 \(\+3 min\): 200 ok/);
      expect(result.stdout).toContain('delivered on attempt 3');
      expect(result.sleeps).toEqual([100, 200]);
    });

    it('stops after a day: 1, 2, 4 ... 32 min, then hourly', async () => {
      const result = await runCli(['send', 'ping', '--url', `${server.url}/webhooks/board`, '--secret', 'not-the-right-secret-0123', '--retry']);
      expect(result.code).toBe(1);
      const minutes = result.sleeps.map((ms) => ms / 60_000);
      expect(minutes).toEqual([1, 2, 4, 8, 16, 32, ...Array(22).fill(60)]);
      expect(minutes.reduce((a, b) => a + b)).toBeLessThanOrEqual(24 * 60);
      expect(result.stdout.match(/^attempt /gm)).toHaveLength(29);
      expectOneLine(result.stderr);
      expect(result.stderr).toContain('gave up after 29 attempts over a day; last: 401 signature_mismatch');
    });

    it('really waits, scaled by --fast, through the launcher', async () => {
      const started = Date.now();
      const result = await spawnCli([
        'send',
        'ping',
        '--url',
        `${server.url}/webhooks/board`,
        '--secret',
        'not-the-right-secret-0123',
        '--retry',
        '--fast',
        '120000',
      ]);
      expect(result.code).toBe(1);
      // A day of schedule (1383 min) at 1 min = 0.5 ms.
      expect(Date.now() - started).toBeGreaterThanOrEqual(retryDelays().reduce((a, b) => a + b) / 120_000);
      expect(result.stdout).toContain('attempt 29/29 (+23 h 3 min)');
    });
  });

  describe('usage errors exit 2 with one line', () => {
    const url = 'http://127.0.0.1:9/webhooks/board';
    it.each([
      ['no --url', ['send', 'ping', '--secret', BOARD_SECRET], '--url is required'],
      ['no secret', ['send', 'ping', '--url', url], 'the webhook secret is required'],
      ['a short secret', ['send', 'ping', '--url', url, '--secret', 'short'], '16 to 256 characters'],
      [
        'a bot token as secret',
        ['send', 'ping', '--url', url, '--secret', `svc_bot_${'a'.repeat(8)}-aaaa-aaaa-aaaa-${'a'.repeat(12)}_${'x'.repeat(43)}`],
        'is an svc token',
      ],
      ['an unknown example', ['send', 'task.exploded', '--url', url, '--secret', BOARD_SECRET], 'neither an example name'],
      ['a bot kind sent as board', ['send', 'messageCreate', '--webhook', 'board', '--url', url, '--secret', BOARD_SECRET], 'is a bot event'],
      ['a bad --webhook', ['send', 'ping', '--webhook', 'chat', '--url', url, '--secret', BOARD_SECRET], '--webhook must be one of board, bot'],
      ['--fast without --retry', ['send', 'ping', '--fast', '10', '--url', url, '--secret', BOARD_SECRET], 'use it with --retry'],
      ['a bad --fast', ['send', 'ping', '--retry', '--fast', 'zero', '--url', url, '--secret', BOARD_SECRET], '--fast must be a positive number'],
      ['an ftp url', ['send', 'ping', '--url', 'ftp://example.com', '--secret', BOARD_SECRET], 'http(s) URL'],
      ['an unknown option', ['send', 'ping', '--urll', url], 'unknown option --urll'],
      ['two sources', ['send', 'ping', 'task.created', '--url', url, '--secret', BOARD_SECRET], 'one example name'],
      [
        'a fractional --timeout',
        ['send', 'ping', '--timeout', '2.5', '--url', url, '--secret', BOARD_SECRET],
        '--timeout must be a whole number of milliseconds from 1 to 2147483647',
      ],
      [
        'a --timeout longer than a timer holds',
        ['send', 'ping', '--timeout', '3000000000', '--url', url, '--secret', BOARD_SECRET],
        '--timeout must be a whole number',
      ],
      [
        'a url with a user and password',
        ['send', 'ping', '--url', 'http://user:hunter2-password@127.0.0.1:9/x', '--secret', BOARD_SECRET],
        '--url must not carry a user name or password',
      ],
      ['a value for an on/off option', ['send', 'ping', '--retry=yes', '--url', url, '--secret', BOARD_SECRET], '--retry takes no value'],
    ])('for %s', async (_case, args, message) => {
      const result = await runCli(args);
      expect(result.code).toBe(2);
      expectOneLine(result.stderr);
      expect(result.stderr).toContain(message);
      expect(result.stdout).toBe('');
    });

    it('exits 1 when the file cannot be read', async () => {
      const result = await runCli(['send', './missing.json', '--url', 'http://127.0.0.1:9/x', '--secret', BOARD_SECRET]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('cannot read event file ./missing.json: no such file');
    });
  });
});
