import { createFakeSvc, type FakeSvc } from '../../src/testing';

const SECRET = 'a-webhook-secret-of-32-characters';
const PUBLIC_URL = 'https://hooks.example.com/webhooks/board';

async function call(
  svc: FakeSvc,
  route: { method: string; path: string; token?: string; body?: unknown },
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${svc.baseUrl}${route.path}`, {
    method: route.method,
    headers: { ...(route.token === undefined ? {} : { authorization: `Bearer ${route.token}` }), 'content-type': 'application/json' },
    ...(route.body === undefined ? {} : { body: typeof route.body === 'string' ? route.body : JSON.stringify(route.body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

describe('the emulated svc routes', () => {
  let svc: FakeSvc;
  const boardPath = () => `/api/boards/${svc.board.id}/webhook`;

  beforeEach(async () => {
    svc = await createFakeSvc({ clock: 'manual' });
  });
  afterEach(() => svc.close());

  describe('GET /api/version', () => {
    it('should answer every field of the version information without a token', async () => {
      const { status, body } = await call(svc, { method: 'GET', path: '/api/version' });
      expect(status).toBe(200);
      expect(Object.keys(body).sort()).toEqual(['attribution', 'commercialLicense', 'commit', 'license', 'planContact', 'product', 'url', 'version']);
    });

    it('should answer 405 to another method', async () => {
      expect((await call(svc, { method: 'POST', path: '/api/version' })).status).toBe(405);
    });
  });

  describe('the bot webhook routes', () => {
    it('should set, read and delete the webhook with the bot token, never returning the secret', async () => {
      const put = await call(svc, {
        method: 'PUT',
        path: '/api/bots/me/webhook',
        token: svc.bot.token,
        body: { url: 'https://bot.example.com/hook', secret: SECRET },
      });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({
        webhook: { url: 'https://bot.example.com/hook', enabled: true, disabledAt: null, failingSince: null, lastOkAt: null, lastError: null, pending: 0 },
      });
      const get = await call(svc, { method: 'GET', path: '/api/bots/me/webhook', token: svc.bot.token });
      expect(get.body).toEqual(put.body);
      expect(JSON.stringify(get.body)).not.toContain(SECRET);
      expect((await call(svc, { method: 'DELETE', path: '/api/bots/me/webhook', token: svc.bot.token })).status).toBe(204);
      expect((await call(svc, { method: 'GET', path: '/api/bots/me/webhook', token: svc.bot.token })).status).toBe(404);
    });

    it.each([
      ['no token', undefined],
      ['a malformed bot token', 'svc_bot_not-a-uuid_abc'],
      ['an unknown bot token', `svc_bot_${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}_${'a'.repeat(43)}`],
      ['the right bot id with another secret part', () => `${svc.bot.token.slice(0, -43)}${'b'.repeat(43)}`],
      ['an unknown opaque token', 'person_unknown'],
    ])('should answer 401 unauthorized to %s', async (_what, token) => {
      const { status, body } = await call(svc, { method: 'GET', path: '/api/bots/me/webhook', token: typeof token === 'function' ? token() : token });
      expect(status).toBe(401);
      expect(body.code).toBe('unauthorized');
    });

    it("should answer 403 forbidden to a person's token", async () => {
      const { status, body } = await call(svc, { method: 'GET', path: '/api/bots/me/webhook', token: svc.person.token });
      expect([status, body.code]).toEqual([403, 'forbidden']);
    });

    it.each([
      ['absent', undefined],
      ['empty', ''],
      ['15 characters', 'x'.repeat(15)],
      ['257 characters', 'x'.repeat(257)],
    ])('should answer 400 invalid_secret when the secret is %s (no generated secret for a bot)', async (_what, secret) => {
      const { status, body } = await call(svc, {
        method: 'PUT',
        path: '/api/bots/me/webhook',
        token: svc.bot.token,
        body: { url: 'https://bot.example.com/hook', secret },
      });
      expect([status, body.code]).toEqual([400, 'invalid_secret']);
    });

    it('should accept a secret of 16 and of 256 characters', async () => {
      for (const secret of ['x'.repeat(16), 'x'.repeat(256)]) {
        expect(
          (await call(svc, { method: 'PUT', path: '/api/bots/me/webhook', token: svc.bot.token, body: { url: 'https://bot.example.com/hook', secret } }))
            .status,
        ).toBe(200);
      }
    });
  });

  describe('the board webhook routes', () => {
    it('should generate a 32-byte base64url secret for an absent secret and return it once only', async () => {
      const put = await call(svc, { method: 'PUT', path: boardPath(), token: svc.person.token, body: { url: PUBLIC_URL } });
      expect(put.status).toBe(200);
      expect(put.body.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(put.body.secret, 'base64url')).toHaveLength(32);
      const get = await call(svc, { method: 'GET', path: boardPath(), token: svc.person.token });
      expect(get.body).toEqual({
        url: PUBLIC_URL,
        hasSecret: true,
        enabled: true,
        disabledAt: null,
        failingSince: null,
        lastOkAt: null,
        lastError: null,
        pending: 0,
        pausedReason: null,
      });
      expect(JSON.stringify(get.body)).not.toContain(put.body.secret);
    });

    it('should not return a secret the caller gave', async () => {
      const put = await call(svc, { method: 'PUT', path: boardPath(), token: svc.person.token, body: { url: PUBLIC_URL, secret: SECRET } });
      expect(put.status).toBe(200);
      expect(put.body.secret).toBeUndefined();
      expect(JSON.stringify(put.body)).not.toContain(SECRET);
    });

    it.each([
      ['http://', 'http://hooks.example.com/x'],
      ['localhost', 'https://localhost/x'],
      ['a loopback address', 'https://127.0.0.1/x'],
      ['a private address', 'https://10.1.2.3/x'],
      ['a private IPv6 address', 'https://[fd00::1]/x'],
      ['172.16/12', 'https://172.16.0.1/x'],
      ['192.168/16', 'https://192.168.1.1/x'],
      ['169.254/16', 'https://169.254.0.1/x'],
      ['::1', 'https://[::1]/x'],
      ['fe80::/10', 'https://[fe80::1]/x'],
      ['a single-label name', 'https://intranet/x'],
      ['something that is not a URL', 'not a url'],
      ['no url', undefined],
    ])('should answer 400 invalid_url to %s', async (_what, url) => {
      const { status, body } = await call(svc, { method: 'PUT', path: boardPath(), token: svc.person.token, body: { url, secret: SECRET } });
      expect([status, body.code]).toEqual([400, 'invalid_url']);
      expect(svc.webhook({ boardId: svc.board.id })).toBeUndefined();
    });

    it('should answer 400 invalid_body to a body that is not a JSON object', async () => {
      for (const body of ['{"url":', '[1]', 'null']) {
        const answer = await call(svc, { method: 'PUT', path: boardPath(), token: svc.person.token, body });
        expect([answer.status, answer.body.code]).toEqual([400, 'invalid_body']);
      }
    });

    it('should answer 404 for an unknown board, and 403 for a board the person does not manage', async () => {
      const unknown = await call(svc, { method: 'GET', path: '/api/boards/3b0b7c1e-0000-4000-8000-000000000000/webhook', token: svc.person.token });
      expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
      const other = svc.addBoard();
      const forbidden = await call(svc, {
        method: 'PUT',
        path: `/api/boards/${other.id}/webhook`,
        token: svc.person.token,
        body: { url: PUBLIC_URL, secret: SECRET },
      });
      expect([forbidden.status, forbidden.body.code]).toEqual([403, 'forbidden']);
    });

    it('should answer 403 to a bot token and 401 to an unknown token', async () => {
      expect((await call(svc, { method: 'GET', path: boardPath(), token: svc.bot.token })).status).toBe(403);
      expect((await call(svc, { method: 'GET', path: boardPath(), token: 'person_forged' })).status).toBe(401);
    });

    it('should answer 403 plan_required to a PUT and a ping below Business, and still show the state', async () => {
      await call(svc, { method: 'PUT', path: boardPath(), token: svc.person.token, body: { url: PUBLIC_URL, secret: SECRET } });
      svc.setPlan('free');
      const put = await call(svc, { method: 'PUT', path: boardPath(), token: svc.person.token, body: { url: PUBLIC_URL, secret: SECRET } });
      expect([put.status, put.body.code]).toEqual([403, 'plan_required']);
      expect((await call(svc, { method: 'POST', path: `${boardPath()}/ping`, token: svc.person.token })).status).toBe(403);
      expect((await call(svc, { method: 'GET', path: boardPath(), token: svc.person.token })).body.pausedReason).toBe('PLAN');
    });

    it('should answer 204 to DELETE, then 404 to GET', async () => {
      await call(svc, { method: 'PUT', path: boardPath(), token: svc.person.token, body: { url: PUBLIC_URL, secret: SECRET } });
      expect((await call(svc, { method: 'DELETE', path: boardPath(), token: svc.person.token })).status).toBe(204);
      expect((await call(svc, { method: 'GET', path: boardPath(), token: svc.person.token })).status).toBe(404);
    });

    it('should answer 405 with Allow to another method', async () => {
      const { status, headers } = await call(svc, { method: 'PATCH', path: boardPath(), token: svc.person.token });
      expect(status).toBe(405);
      expect(headers.get('allow')).toBe('GET, PUT, DELETE');
    });
  });

  describe('POST /api/boards/{id}/webhook/ping', () => {
    it('should answer 404 when the board has no webhook', async () => {
      expect((await call(svc, { method: 'POST', path: `${boardPath()}/ping`, token: svc.person.token })).status).toBe(404);
    });

    it('should report a refused delivery, then answer 429 with Retry-After within 10 seconds, and take a ping again after', async () => {
      await call(svc, { method: 'PUT', path: boardPath(), token: svc.person.token, body: { url: PUBLIC_URL, secret: SECRET } });
      const first = await call(svc, { method: 'POST', path: `${boardPath()}/ping`, token: svc.person.token });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ ok: false, status: 0, error: expect.stringContaining('allowedHosts') });
      expect((await call(svc, { method: 'POST', path: `${boardPath()}/ping`, token: svc.person.token })).headers.get('retry-after')).toBe('10');
      await svc.advance(9_999);
      const again = await call(svc, { method: 'POST', path: `${boardPath()}/ping`, token: svc.person.token });
      expect([again.status, again.body.code, again.headers.get('retry-after')]).toEqual([429, 'rate_limited', '1']);
      await svc.advance(1);
      expect((await call(svc, { method: 'POST', path: `${boardPath()}/ping`, token: svc.person.token })).status).toBe(200);
    });
  });

  it('should answer 404 to a route svc does not have, and 413 to a body over 64 KB', async () => {
    expect((await call(svc, { method: 'GET', path: '/api/boards' })).status).toBe(404);
    const big = await call(svc, {
      method: 'PUT',
      path: boardPath(),
      token: svc.person.token,
      body: JSON.stringify({ url: PUBLIC_URL, pad: 'x'.repeat(70_000) }),
    });
    expect([big.status, big.body.code]).toEqual([413, 'body_too_large']);
  });

  describe('what a test reads of the requests and the secrets', () => {
    it("should record each request to svc's routes with its headers, body and status, and not the control routes", async () => {
      await call(svc, { method: 'PUT', path: '/api/bots/me/webhook', token: svc.bot.token, body: { url: 'https://bot.example.com/hook', secret: SECRET } });
      await call(svc, { method: 'GET', path: '/api/version' });
      await fetch(`${svc.baseUrl}/_emulator`);
      expect(svc.requests().map((r) => [r.method, r.url, r.status, r.headers.authorization])).toEqual([
        ['PUT', '/api/bots/me/webhook', 200, `Bearer ${svc.bot.token}`],
        ['GET', '/api/version', 200, undefined],
      ]);
      expect(JSON.parse(svc.requests()[0]!.body)).toEqual({ url: 'https://bot.example.com/hook', secret: SECRET });
    });

    it('should tell whether a webhook holds a secret without showing it', async () => {
      await call(svc, { method: 'PUT', path: boardPath(), token: svc.person.token, body: { url: PUBLIC_URL, secret: SECRET } });
      expect(svc.secretMatches({ boardId: svc.board.id }, SECRET)).toBe(true);
      expect(svc.secretMatches({ boardId: svc.board.id }, `${SECRET}x`)).toBe(false);
      expect(svc.secretMatches({ botId: svc.bot.id }, SECRET)).toBe(false);
    });

    it('should answer 401 to a revoked token', async () => {
      svc.revokeToken(svc.bot.token);
      svc.revokeToken(svc.person.token);
      expect((await call(svc, { method: 'GET', path: '/api/bots/me/webhook', token: svc.bot.token })).status).toBe(401);
      expect((await call(svc, { method: 'GET', path: boardPath(), token: svc.person.token })).status).toBe(401);
    });
  });
});

describe('with botGetWrapped: false', () => {
  it('should answer the bot GET with the bare state, and PUT still wrapped', async () => {
    const svc = await createFakeSvc({ botGetWrapped: false });
    try {
      const put = await call(svc, {
        method: 'PUT',
        path: '/api/bots/me/webhook',
        token: svc.bot.token,
        body: { url: 'https://bot.example.com/hook', secret: SECRET },
      });
      const get = await call(svc, { method: 'GET', path: '/api/bots/me/webhook', token: svc.bot.token });
      expect(get.body).toEqual(put.body.webhook);
    } finally {
      await svc.close();
    }
  });
});

describe('injected faults of the API', () => {
  let svc: FakeSvc;
  const boardPath = () => `/api/boards/${svc.board.id}/webhook`;
  beforeEach(async () => {
    svc = await createFakeSvc({ clock: 'manual' });
    await call(svc, { method: 'PUT', path: boardPath(), token: svc.person.token, body: { url: PUBLIC_URL, secret: SECRET } });
  });
  afterEach(() => svc.close());

  it('should answer a status with Retry-After for the times asked, on the method and webhook asked, then the route again', async () => {
    svc.injectApiFault({ status: 503, retryAfter: '7', times: 1, method: 'GET', on: { boardId: svc.board.id } });
    const faulted = await call(svc, { method: 'GET', path: boardPath(), token: svc.person.token });
    expect([faulted.status, faulted.headers.get('retry-after')]).toEqual([503, '7']);
    expect((await call(svc, { method: 'GET', path: boardPath(), token: svc.person.token })).status).toBe(200);
  });

  it('should not touch another webhook, and stop once removed', async () => {
    const remove = svc.injectApiFault({ status: 500, on: 'bot' });
    expect((await call(svc, { method: 'GET', path: boardPath(), token: svc.person.token })).status).toBe(200);
    expect((await call(svc, { method: 'GET', path: '/api/bots/me/webhook', token: svc.bot.token })).status).toBe(500);
    remove();
    expect((await call(svc, { method: 'GET', path: '/api/bots/me/webhook', token: svc.bot.token })).status).toBe(404);
  });

  it('should answer fields over the state, and bodies that are not the state', async () => {
    svc.injectApiFault({ fields: { pausedReason: 'LEGAL_HOLD' }, times: 1 });
    expect((await call(svc, { method: 'GET', path: boardPath(), token: svc.person.token })).body).toMatchObject({
      url: PUBLIC_URL,
      pausedReason: 'LEGAL_HOLD',
    });
    svc.injectApiFault({ kind: 'malformed-json', times: 1 });
    const res = await fetch(`${svc.baseUrl}${boardPath()}`, { headers: { authorization: `Bearer ${svc.person.token}` } });
    expect([res.status, await res.text()]).toEqual([200, '{"enabled": tru']);
  });

  it('should hold a no-answer open until the client gives up', async () => {
    svc.injectApiFault({ kind: 'no-answer' });
    await expect(
      fetch(`${svc.baseUrl}${boardPath()}`, { headers: { authorization: `Bearer ${svc.person.token}` }, signal: AbortSignal.timeout(200) }),
    ).rejects.toThrow();
  });

  it('should refuse a fault with no answer or two', () => {
    expect(() => svc.injectApiFault({} as never)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    expect(() => svc.injectApiFault({ status: 500, kind: 'empty' } as never)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });

  it.each([
    ['epoch-seconds', (ms: number) => Math.floor(ms / 1000)],
    ['epoch-ms', (ms: number) => ms],
    ['http-date', (ms: number) => new Date(ms).toUTCString()],
  ] as const)('should write the state timestamps as %s when told', async (format, write) => {
    await svc.advance(0);
    svc.emitBoardEvent({ type: 'task.created' });
    await svc.advance(0);
    svc.setStateTimeFormat(format);
    const { body } = await call(svc, { method: 'GET', path: boardPath(), token: svc.person.token });
    expect(body.failingSince).toEqual(write(svc.now()));
  });
});
