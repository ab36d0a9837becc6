import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startExampleServer, type ExampleServer } from '../support/example-server';
import { emulatedSvc, type EmulatedSvc } from '../support/emulated-svc';
import { fixture, signBoard } from '../support/sign';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

describe('the example server (npm start)', () => {
  let server: ExampleServer;
  beforeAll(async () => {
    server = await startExampleServer();
  });
  afterAll(() => server?.stop());

  it('prints a curl command that reaches a command handler, and a repeat that is a duplicate', async () => {
    const curl = server
      .output()
      .split('\n')
      .find((l) => l.startsWith('curl '))!;
    expect(curl).toContain('X-Svc-Signature: sha256=');
    const first = await run('bash', ['-c', curl]);
    expect(JSON.parse(first.stdout)).toEqual({ ok: true });
    const again = await run('bash', ['-c', curl]);
    expect(JSON.parse(again.stdout)).toEqual({ ok: true, duplicate: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(server.output()).toContain('"msg":"deploy command received"');
  });

  it('prints a board ping recipe that signs at send time with openssl and reaches the ping handler', async () => {
    const recipe = server
      .output()
      .split('\n')
      .find((l) => l.startsWith('id='))!;
    const res = await run('bash', ['-c', recipe]);
    expect(JSON.parse(res.stdout)).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(server.output()).toContain('ping received: the board webhook is wired up');
  });
});

describe('the example server on real secrets', () => {
  const BOT = 'real-bot-secret-+/=-0123456789abcdef';
  const BOARD = 'real-board-secret-0123456789abcdef';
  const env = { SVC_BOT_WEBHOOK_SECRET: BOT, SVC_BOARD_WEBHOOK_SECRET: BOARD };
  let server: ExampleServer;
  beforeAll(async () => {
    server = await startExampleServer(env);
  });
  afterAll(() => server?.stop());

  it('prints no secret and nothing signed with one; its commands sign at send time from the environment', async () => {
    const printed = server.output();
    expect(printed).not.toContain(BOT);
    expect(printed).not.toContain(BOARD);
    expect(printed).not.toMatch(/[0-9a-f]{64}/);
    const lines = printed.split('\n');
    // The bot hint runs the CLI; here from the source rather than through npx.
    const send = lines
      .find((l) => l.includes('npx svc-webhooks send'))!
      .replace('npx svc-webhooks', `SVC_WEBHOOKS_CLI_SOURCE=1 node ${join(root, 'bin', 'svc-webhooks.js')}`);
    const sent = await run('bash', ['-c', send], { env: { ...process.env, ...env } });
    expect(sent.stdout).toContain('delivered');
    const ping = await run('bash', ['-c', lines.find((l) => l.startsWith('id='))!], { env: { ...process.env, ...env } });
    expect(JSON.parse(ping.stdout)).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(server.output()).toContain('ping received: the board webhook is wired up');
    expect(server.output()).not.toContain(BOT);
    expect(server.output()).not.toContain(BOARD);
  });
});

/** A GET with the given Host header (fetch would not send one of ours). */
function inspectorGet(base: string, path: string, host = 'localhost'): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the example server watching its webhooks (given a token)', () => {
  let svc: EmulatedSvc;
  let server: ExampleServer;
  beforeAll(async () => {
    svc = await emulatedSvc({ boards: 2 });
    await svc.failSince(svc.boardIds[1]!, 0);
    server = await startExampleServer({
      SVC_BASE_URL: svc.svc.baseUrl,
      SVC_TOKEN: svc.svc.person.token,
      SVC_BOT_TOKEN: svc.svc.bot.token,
      SVC_WATCH_BOARDS: svc.boardIds.join(','),
      SVC_WATCH_INTERVAL_MS: '100',
    });
  });
  afterAll(async () => {
    await server?.stop();
    await svc.close();
  });

  it("logs each change of its webhooks' health, and never a token", async () => {
    const deadline = Date.now() + 10_000;
    while (!server.output().includes('watching 3 webhooks') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(server.output()).toContain('watching 3 webhooks: 2 healthy, 1 failing');
    expect(server.output()).toMatch(new RegExp(`"boardId":"${svc.boardIds[1]}".*"msg":"board webhook of board ${svc.boardIds[1]}: failing since`));
    svc.svc.setPlan('free', svc.boardIds[0]!);
    while (!server.output().includes('"state":"paused"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(server.output()).toContain('"state":"paused"');
    expect(server.output()).not.toContain(svc.svc.person.token);
    expect(server.output()).not.toContain(svc.svc.bot.token.slice(-43));
  });

  it("the inspector's panel: each webhook's state as JSON, behind the inspector's own Host check", async () => {
    const base = server.base;
    const { status, body } = await inspectorGet(base, '/inspector/webhooks');
    expect(status).toBe(200);
    const panel = JSON.parse(body);
    expect(panel.watching).toBe(true);
    expect(panel.webhooks.map((w: { webhook: string; boardId?: string; state: string }) => [w.boardId ?? w.webhook, w.state])).toEqual([
      [svc.boardIds[0], 'paused'],
      [svc.boardIds[1], 'failing'],
      ['bot', 'healthy'],
    ]);
    expect(Object.keys(panel.webhooks[1]).sort()).toEqual(['boardId', 'checkedAt', 'pending', 'since', 'state', 'summary', 'webhook']);
    expect((await inspectorGet(base, '/inspector/webhooks', 'attacker.example')).status).toBe(403);
    expect((await inspectorGet(base, '/inspector/webhook-panel.js', 'attacker.example')).status).toBe(403);
    const page = await inspectorGet(base, '/inspector');
    expect(page.body).toContain('<section id="webhooks" hidden>');
    expect(page.body).toContain('src="/inspector/webhook-panel.js"');
  });
});

describe('the example server without a token', () => {
  let server: ExampleServer;
  beforeAll(async () => {
    server = await startExampleServer();
  });
  afterAll(() => server?.stop());

  it("watches nothing; the inspector's panel says how to start", async () => {
    const { status, body } = await inspectorGet(server.base, '/inspector/webhooks');
    expect(status).toBe(200);
    expect(JSON.parse(body)).toEqual({
      watching: false,
      note: expect.stringMatching(/^Not watching: set SVC_BASE_URL, and SVC_TOKEN with SVC_WATCH_BOARDS/),
      webhooks: [],
    });
  });
});

describe('the example server on the development secrets', () => {
  it('refuses to listen beyond this machine', async () => {
    await expect(startExampleServer({ HOST: '0.0.0.0' })).rejects.toThrow(/exited \(1\)[\s\S]*refusing to listen beyond this machine/);
  });
});

describe('the example server listening beyond this machine (HOST=0.0.0.0, real secrets): its inspector', () => {
  const BOT = 'real-bot-secret-+/=-0123456789abcdef';
  const BOARD = 'real-board-secret-0123456789abcdef';
  let server: ExampleServer;
  let base = '';
  const event = fixture('board', 'task.created');

  beforeAll(async () => {
    server = await startExampleServer({ HOST: '0.0.0.0', SVC_BOT_WEBHOOK_SECRET: BOT, SVC_BOARD_WEBHOOK_SECRET: BOARD });
    // It listens on every interface; the test reaches it on loopback only.
    base = `http://127.0.0.1:${new URL(server.base).port}`;
    const signed = signBoard(event, { secret: BOARD });
    expect((await fetch(`${base}/webhooks/board`, { method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(200);
  });
  afterAll(() => server?.stop());

  /** Where the server said its access token is. */
  function tokenFile(): string {
    const named = /it is in (\S+) \(readable by you only\)/.exec(server.output());
    if (named === null) throw new Error(`the server named no access token file:\n${server.output()}`);
    return named[1]!;
  }
  const token = (): string => readFileSync(tokenFile(), 'utf8').trim();

  /** A GET with the given headers, Host included (fetch would replace it); read to its end, or an event stream to its first chunk. */
  function get(path: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${base}${path}`, { headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (res.headers['content-type']?.startsWith('text/event-stream')) {
            resolve({ status: res.statusCode!, text });
            req.destroy();
          }
        });
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('reads no payload for a request without the token, whatever Host it sends -> 401', async () => {
    for (const path of ['/inspector', '/inspector/deliveries', '/inspector/events', '/inspector/webhooks']) {
      for (const host of ['localhost', '127.0.0.1', 'attacker.example']) {
        const answer = await get(path, { host });
        expect([path, host, answer.status]).toEqual([path, host, 401]);
        expect(answer.text).not.toContain(event.id);
      }
    }
    const wrong = await get('/inspector/deliveries', { authorization: `Bearer ${'x'.repeat(43)}` });
    expect(wrong.status).toBe(401);
  });

  it('serves the deliveries to a request that carries the token in Authorization', async () => {
    const answer = await get('/inspector/deliveries', { authorization: `Bearer ${token()}` });
    expect((await get(`/inspector/deliveries?token=${encodeURIComponent(token())}`, {})).status).toBe(401);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(event.id);
  });

  it('takes the token from its form (posted, not in the URL) and sets a cookie that opens the page and the stream', async () => {
    const wrong = await fetch(`${base}/inspector/access`, { method: 'POST', body: new URLSearchParams({ token: 'not-the-token' }), redirect: 'manual' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const res = await fetch(`${base}/inspector/access`, { method: 'POST', body: new URLSearchParams({ token: token() }), redirect: 'manual' });
    expect([res.status, res.headers.get('location')]).toEqual([303, '/inspector']);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const session = cookie.split(';')[0]!;
    expect((await get('/inspector', { cookie: session })).status).toBe(200);
    const stream = await get('/inspector/events', { cookie: session });
    expect(stream.status).toBe(200);
    expect(stream.text).toContain(event.id);
  });

  it('never prints the token; its file is readable by its user only', () => {
    expect(token().length).toBeGreaterThanOrEqual(43);
    expect(server.output()).not.toContain(token());
    expect(statSync(tokenFile()).mode & 0o077).toBe(0);
  });
});

describe('the example server on this machine (HOST=127.0.0.1): its inspector', () => {
  it('needs no token, and SVC_INSPECTOR=token asks for one there too', async () => {
    const open = await startExampleServer({ HOST: '127.0.0.1' });
    const tokened = await startExampleServer({ HOST: '127.0.0.1', SVC_INSPECTOR: 'token' });
    try {
      expect((await fetch(`${open.base}/inspector/deliveries`)).status).toBe(200);
      expect(open.output()).not.toContain('access token');
      expect((await fetch(`${tokened.base}/inspector/deliveries`)).status).toBe(401);
    } finally {
      await Promise.all([open.stop(), tokened.stop()]);
    }
  });
});
