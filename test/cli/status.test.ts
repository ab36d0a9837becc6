import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { emulatedSvc, put, BOT_URL, HOOKS_ORIGIN, type EmulatedSvc } from '../support/emulated-svc';
import { expectOneLine, runCli, spawnCli, tempFiles } from './run-cli';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('svc-webhooks status: one line per webhook, an exit code for cron', () => {
  let svc: EmulatedSvc;
  let env: Record<string, string>;
  beforeEach(async () => {
    svc = await emulatedSvc({ boards: 3 });
    env = { SVC_TOKEN: svc.svc.person.token, SVC_BOT_TOKEN: svc.svc.bot.token, SVC_BASE_URL: svc.svc.baseUrl };
  });
  afterEach(() => svc.close());

  const boards = () => svc.boardIds.flatMap((id) => ['--board', id]);

  it('exit 0 when every webhook is healthy (the real launcher)', async () => {
    const result = await spawnCli(['status', ...boards(), '--bot'], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^WEBHOOK\s+STATE\s+SINCE\s+PENDING\s+LAST ERROR \/ NOTE$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 2))).toEqual([...svc.boardIds.map((id) => [`board ${id}`, 'healthy']), ['bot', 'healthy']]);
    expect(result.stdout).not.toContain(svc.svc.person.token);
    expect(result.stdout).not.toContain(svc.svc.bot.token.slice(-43));
  });

  // A failing webhook still holds the event it retries (pending 1); a disabled one has dropped it.
  it.each<[string, (s: EmulatedSvc, id: string) => Promise<void>, RegExp]>([
    [
      'failing',
      (s, id) => s.failSince(id, 3_600_000),
      /failing\s+\S+ \(1 h ago\)\s+1\s+receiver answered 500 \(svc disables it in about 23 h, dropping its queue\)/,
    ],
    [
      'disabled',
      (s, id) => s.failSince(id, DAY_MS + 60_000),
      /disabled\s+\S+ \(1 min ago\)\s+0\s+receiver answered 500 \(queue dropped; re-enable: svc-webhooks board-webhook reenable /,
    ],
    [
      'paused',
      async (s, id) => s.svc.setPlan('free', id),
      /paused\s+-\s+0\s+paused by svc \(pausedReason PLAN: the plan dropped below Business\): new events are not queued/,
    ],
    ['missing', (s, id) => s.deleteWebhook(id), /missing\s+-\s+-\s+no webhook: svc answered 404/],
  ])('exit 1 when one is %s, its line saying what it means', async (_state, make, line) => {
    await make(svc, svc.boardIds[1]!);
    const result = await runCli(['status', ...boards()], { env });
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n');
    expect(lines.find((l) => l.includes(svc.boardIds[1]!))).toMatch(line);
    expect(lines.filter((l) => /\shealthy\s/.test(l))).toHaveLength(2);
  });

  it.each([
    ['a 503', (s: EmulatedSvc) => void s.svc.injectApiFault({ status: 503 })],
    ['a revoked token (401)', (s: EmulatedSvc) => s.svc.revokeToken(s.svc.person.token)],
    ['no answer in time', (s: EmulatedSvc) => void s.svc.injectApiFault({ kind: 'no-answer' })],
    ['malformed JSON', (s: EmulatedSvc) => void s.svc.injectApiFault({ kind: 'malformed-json' })],
  ])('exit 3 when svc cannot tell (%s)', async (_name, make) => {
    make(svc);
    const result = await runCli(['status', ...boards(), '--timeout-ms', '200'], { env });
    expect(result.code).toBe(3);
    expect(result.stdout.split('\n').filter((l) => /\sunreachable\s+-\s+-\s+state unknown: /.test(l))).toHaveLength(3);
  });

  it('exit 3 when svc is not there at all', async () => {
    await svc.svc.close();
    const result = await runCli(['status', ...boards()], { env });
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/unreachable\s+-\s+-\s+state unknown: svc could not be reached/);
  });

  it('exit 1, not 3, when one is known bad and another unknown', async () => {
    await svc.failSince(svc.boardIds[0]!, 0);
    svc.svc.injectApiFault({ status: 500, on: { boardId: svc.boardIds[1]! } });
    expect((await runCli(['status', ...boards()], { env })).code).toBe(1);
  });

  it('--json: the exit code and every status, with ISO times', async () => {
    await svc.failSince(svc.boardIds[0]!, 60_000, 502);
    const result = await runCli(['status', ...boards(), '--bot', '--json'], { env });
    expect(result.code).toBe(1);
    const doc = JSON.parse(result.stdout);
    expect(doc.exitCode).toBe(1);
    expect(doc.webhooks.map((w: { state: string }) => w.state)).toEqual(['failing', 'healthy', 'healthy', 'healthy']);
    expect(doc.webhooks[0]).toMatchObject({
      webhook: 'board',
      boardId: svc.boardIds[0],
      state: 'failing',
      lastError: 'receiver answered 502',
      pending: 1,
      failingSince: { raw: expect.any(String), ms: expect.any(Number) },
    });
    expect(doc.webhooks[0].disablesAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(doc.webhooks[3]).toMatchObject({ webhook: 'bot', state: 'healthy' });
  });

  it('--boards-file: one id per line, comments and blank lines skipped', async () => {
    const files = tempFiles({ 'boards.txt': `# our boards\n${svc.boardIds[0]}\n\n${svc.boardIds[2]}  # ops\n` });
    try {
      const result = await runCli(['status', '--boards-file', files.path('boards.txt')], { env });
      expect(result.code).toBe(0);
      expect(result.stdout.trimEnd().split('\n')).toHaveLength(3);
    } finally {
      files.cleanup();
    }
  });

  describe('usage errors exit 2 with one line on stderr', () => {
    it.each<[string, string[], Record<string, string | undefined>?, RegExp?]>([
      ['nothing to check', [], undefined, /name the webhooks to check/],
      ['an argument', ['boards'], undefined, /status takes no arguments/],
      ['--interval-ms without --watch', ['--board', 'b1', '--interval-ms', '1000'], undefined, /--interval-ms goes with --watch/],
      ['no base url', ['--board', 'b1'], { SVC_BASE_URL: undefined }, /base url is required/],
      ['no token', ['--board', 'b1'], { SVC_TOKEN: undefined }, /set SVC_TOKEN/],
      ['a bot token for the boards', ['--board', 'b1'], { SVC_TOKEN: 'BOT' }, /not a bot token/],
      ['--bot without a bot token', ['--bot'], { SVC_BOT_TOKEN: 'person-token-0123456789' }, /--bot needs the bot token/],
      ['a board id with spaces', ['--board', ' b1 '], undefined, /--board takes a board id/],
      ['--token on the command line', ['--board', 'b1', '--token', 'x'], undefined, /--token is not accepted/],
      ['a bad --max-rps', ['--board', 'b1', '--max-rps', '0'], undefined, /--max-rps must be a positive number/],
      ['--interval-ms below 10', ['--board', 'b1', '--watch', '--interval-ms', '5'], undefined, /--interval-ms must be at least 10/],
    ])('%s', async (_name, args, overrides, message) => {
      const merged = { ...env, ...overrides };
      if (overrides?.SVC_TOKEN === 'BOT') merged.SVC_TOKEN = svc.svc.bot.token;
      const result = await runCli(['status', ...args], { env: merged });
      expect(result.code).toBe(2);
      expectOneLine(result.stderr);
      if (message) expect(result.stderr).toMatch(message);
      expect(svc.requests()).toEqual([]);
    });
  });

  describe('--watch', () => {
    it("prints the states, then a line per change; exits with the last states' code when interrupted", async () => {
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      const run = runCli(['status', ...boards(), '--watch', '--interval-ms', '30', '--max-rps', '1000'], { env, interrupted: () => stopped });
      await new Promise((r) => setTimeout(r, 150));
      await svc.failSince(svc.boardIds[0]!, 0);
      await new Promise((r) => setTimeout(r, 150));
      // The receiver recovers: svc's retry a minute later is answered 200.
      svc.sink.status = 200;
      await svc.svc.advance(60_000);
      await new Promise((r) => setTimeout(r, 150));
      svc.svc.setPlan('free', svc.boardIds[2]!);
      await new Promise((r) => setTimeout(r, 150));
      stop();
      const result = await run;
      expect(result.code).toBe(1);
      const lines = result.stdout.trimEnd().split('\n');
      expect(lines.slice(0, 4).map((l) => l.split(/\s{2,}/)[1])).toEqual(['STATE', 'healthy', 'healthy', 'healthy']);
      const changes = lines.slice(4);
      expect(changes).toHaveLength(3);
      expect(changes[0]).toMatch(new RegExp(`^\\d{4}-\\S+Z  board ${svc.boardIds[0]}  healthy → failing since .*last error: receiver answered 500$`));
      expect(changes[1]).toMatch(new RegExp(`board ${svc.boardIds[0]}  failing → healthy: delivering, 0 pending$`));
      expect(changes[2]).toMatch(new RegExp(`board ${svc.boardIds[2]}  healthy → paused by svc \\(pausedReason PLAN`));
    });

    it('--json: one JSON line per status, then per change', async () => {
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      const run = runCli(['status', '--board', svc.boardIds[0]!, '--watch', '--json', '--interval-ms', '30', '--max-rps', '1000'], {
        env,
        interrupted: () => stopped,
      });
      // Deleted once svc has answered the first poll of the webhook: its first status is healthy.
      while (!svc.requests().some((r) => r.method === 'GET' && r.url.includes(svc.boardIds[0]!) && r.status === 200))
        await new Promise((r) => setTimeout(r, 10));
      await svc.deleteWebhook(svc.boardIds[0]!);
      await new Promise((r) => setTimeout(r, 150));
      stop();
      const result = await run;
      expect(result.code).toBe(1);
      const lines = result.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => [l.previous, l.state])).toEqual([
        [null, 'healthy'],
        ['healthy', 'missing'],
      ]);
    });

    it('exit 0 when all are healthy at the end', async () => {
      const result = await runCli(['status', ...boards(), '--watch'], { env, interrupted: () => new Promise((r) => setTimeout(r, 100)) });
      expect(result.code).toBe(0);
    });
  });
});

describe('svc-webhooks status --url, --bot-url: a webhook aimed elsewhere is misdirected', () => {
  const EXPECT = `${HOOKS_ORIGIN}/webhooks/board`;
  let svc: EmulatedSvc;
  let env: Record<string, string>;
  beforeEach(async () => {
    svc = await emulatedSvc({ boards: 2 });
    env = { SVC_TOKEN: svc.svc.person.token, SVC_BOT_TOKEN: svc.svc.bot.token, SVC_BASE_URL: svc.svc.baseUrl };
  });
  afterEach(() => svc.close());

  const boards = () => svc.boardIds.flatMap((id) => ['--board', id]);
  const aim = (board: string, url: string) => put(svc.svc, `/api/boards/${board}/webhook`, svc.svc.person.token, { url, secret: svc.secrets.get(board) });

  it.each<[string, string, string]>([
    ['host', 'https://evil.example.net/webhooks/board?board=x', 'https://evil.example.net/webhooks/board?…'],
    ['port', 'https://hooks.example.com:8443/webhooks/board', 'https://hooks.example.com:8443/webhooks/board'],
    ['path', 'https://hooks.example.com/hooks/board', 'https://hooks.example.com/hooks/board'],
  ])('another %s: exit 1, its line naming both URLs', async (_name, url, shown) => {
    await aim(svc.boardIds[1]!, url);
    const result = await runCli(['status', ...boards(), '--url', `${EXPECT}?key=expected-key`], { env });
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n');
    expect(lines.find((l) => l.includes(svc.boardIds[1]!))).toMatch(
      new RegExp(
        `misdirected\\s+-\\s+0\\s+misdirected: svc delivers to ${escape(shown)}, not to the expected ${escape(EXPECT)}\\?… \\(svc reports it healthy\\)`,
      ),
    );
    expect(lines.find((l) => l.includes(svc.boardIds[0]!))).toMatch(/\shealthy\s/);
    expect(result.stdout).not.toContain('expected-key');
  });

  it('the same URL with another query is not misdirected: exit 0; without --url nothing is compared', async () => {
    await aim(svc.boardIds[0]!, `${EXPECT}?tenant=7`);
    expect((await runCli(['status', ...boards(), '--url', EXPECT], { env })).code).toBe(0);
    await aim(svc.boardIds[1]!, 'https://evil.example.net/webhooks/board');
    expect((await runCli(['status', ...boards()], { env })).code).toBe(0);
    expect((await runCli(['status', ...boards(), '--url', EXPECT], { env })).code).toBe(1);
  });

  it('a disabled webhook at the expected URL: its note gives the re-enable command with that --url', async () => {
    await svc.failSince(svc.boardIds[0]!, DAY_MS + 60_000);
    const result = await runCli(['status', ...boards(), '--url', `${EXPECT}?key=expected-key`], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`(queue dropped; re-enable: svc-webhooks board-webhook reenable ${svc.boardIds[0]} --url ${EXPECT})`);
    expect(result.stdout).not.toContain('expected-key');
    const plain = await runCli(['status', ...boards()], { env });
    expect(plain.stdout).toContain(`re-enable: svc-webhooks board-webhook reenable ${svc.boardIds[0]} --url <url>)`);
  });

  it("credentials and the query of svc's URL are never printed, in the table or --json", async () => {
    svc.svc.injectApiFault({
      fields: { url: 'https://hook-user:hook-password-123@evil.example.net/in?token=query-token-456' },
      on: { boardId: svc.boardIds[0]! },
    });
    for (const extra of [[], ['--json']]) {
      const result = await runCli(['status', ...boards(), '--url', EXPECT, ...extra], { env });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('https://evil.example.net/in?…');
      for (const hidden of ['hook-user', 'hook-password-123', 'query-token-456']) expect(result.stdout).not.toContain(hidden);
    }
    const json = JSON.parse((await runCli(['status', ...boards(), '--url', EXPECT, '--json'], { env })).stdout);
    expect(json.webhooks[0]).toMatchObject({ state: 'misdirected', url: 'https://evil.example.net/in?…', expectedUrl: EXPECT, svcState: 'healthy' });
  });

  it('--bot-url: the bot webhook elsewhere is misdirected, exit 1', async () => {
    expect((await runCli(['status', '--bot', '--bot-url', BOT_URL], { env })).code).toBe(0);
    const result = await runCli(['status', '--bot', '--bot-url', 'https://bot.example.net/webhooks/bot'], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /bot\s+misdirected\s+.*misdirected: svc delivers to https:\/\/hooks\.example\.com\/webhooks\/bot, not to the expected https:\/\/bot\.example\.net\/webhooks\/bot/,
    );
  });

  it.each<[string, string[], RegExp]>([
    ['--url without boards', ['--bot', '--url', 'https://hooks.example.com/x'], /--url goes with --board or --boards-file/],
    ['--bot-url without --bot', ['--board', 'b1', '--bot-url', 'https://hooks.example.com/x'], /--bot-url goes with --bot/],
    ['--url over http', ['--board', 'b1', '--url', 'http://hooks.example.com/x'], /--url must be the https URL .*must use https/],
    ['--bot-url to loopback', ['--bot', '--bot-url', 'https://127.0.0.1/x'], /--bot-url must be the https URL .*loopback/],
  ])('usage error, exit 2, nothing asked: %s', async (_name, args, message) => {
    const result = await runCli(['status', ...args], { env });
    expect(result.code).toBe(2);
    expectOneLine(result.stderr);
    expect(result.stderr).toMatch(message);
    expect(svc.requests()).toEqual([]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('svc-webhooks status with a base URL that is not svc', () => {
  let site: { url: string; close: () => Promise<void> };
  beforeEach(async () => {
    // A web server that is not svc: every path, /api/version too, is a 404 page.
    const server = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    site = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
  });
  afterEach(() => site.close());

  it('exit 3 with one line saying the base URL is wrong, not every webhook missing', async () => {
    const svc = await emulatedSvc({ boards: 2 });
    const boards = svc.boardIds.flatMap((id) => ['--board', id]);
    const result = await runCli(['status', ...boards], { env: { SVC_TOKEN: svc.svc.person.token, SVC_BASE_URL: site.url } });
    await svc.close();
    expect(result.code).toBe(3);
    expectOneLine(result.stderr);
    expect(result.stderr).toContain('GET /api/version answered 404');
    expect(result.stdout).not.toMatch(/missing/);
  });
});
