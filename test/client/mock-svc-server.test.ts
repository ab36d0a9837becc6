import { startMockSvc, type MockSvc } from '../support/mock-svc-server';

/** The mock enforces svc's rules itself, so a client that skipped its local checks would still be caught. */
describe('mock svc server', () => {
  let svc: MockSvc;
  beforeEach(async () => {
    svc = await startMockSvc();
  });
  afterEach(() => svc.close());

  const put = (path: string, token: string, body: unknown) =>
    fetch(`${svc.baseUrl}${path}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it.each([
    ['http', 'http://hooks.example.com/x'],
    ['localhost', 'https://localhost/x'],
    ['127/8', 'https://127.0.0.1/x'],
    ['10/8', 'https://10.2.3.4/x'],
    ['172.16/12', 'https://172.16.0.1/x'],
    ['192.168/16', 'https://192.168.1.1/x'],
    ['169.254/16', 'https://169.254.0.1/x'],
    ['::1', 'https://[::1]/x'],
    ['fc00::/7', 'https://[fd00::1]/x'],
    ['fe80::/10', 'https://[fe80::1]/x'],
  ])('refuses a %s url (400 invalid_url)', async (_case, url) => {
    const res = await put('/api/bots/me/webhook', svc.botToken, { url, secret: 'x'.repeat(16) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_url' });
  });

  it.each([15, 257])('refuses a secret of %i characters', async (length) => {
    const res = await put('/api/bots/me/webhook', svc.botToken, { url: 'https://a.example.com/x', secret: 'x'.repeat(length) });
    expect(res.status).toBe(400);
  });

  it('generates a board secret once and never returns it again', async () => {
    const path = `/api/boards/${svc.boardId}/webhook`;
    const set = (await (await put(path, svc.personToken, { url: 'https://a.example.com/x' })).json()) as { secret: string };
    expect(set.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const got = await (await fetch(`${svc.baseUrl}${path}`, { headers: { authorization: `Bearer ${svc.personToken}` } })).text();
    expect(got).not.toContain(set.secret);
    expect(JSON.parse(got)).toMatchObject({ hasSecret: true });
  });

  it('answers 429 to a second ping within 10 seconds', async () => {
    await put(`/api/boards/${svc.boardId}/webhook`, svc.personToken, { url: 'https://a.example.com/x' });
    const ping = () => fetch(`${svc.baseUrl}/api/boards/${svc.boardId}/webhook/ping`, { method: 'POST', headers: { authorization: `Bearer ${svc.personToken}` } });
    expect((await ping()).status).toBe(200);
    const second = await ping();
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('10');
  });

  it('finds the bot by the id in its token and refuses other tokens', async () => {
    const forged = svc.botToken.replace(svc.botId, '00000000-0000-4000-8000-000000000000');
    expect((await fetch(`${svc.baseUrl}/api/bots/me/webhook`, { headers: { authorization: `Bearer ${forged}` } })).status).toBe(401);
    expect((await fetch(`${svc.baseUrl}/api/bots/me/webhook`)).status).toBe(401);
  });
});
