import { createFakeSvc, type FakeSvc } from '../../src/testing';
import { listen } from './listen';
import { expectOneLine, runCli, spawnCli } from './run-cli';

describe('svc-webhooks version', () => {
  let svc: FakeSvc;
  beforeAll(async () => {
    svc = await createFakeSvc({ versionInfo: { version: '1.42.0', commit: 'a1b2c3d' } });
  });
  afterAll(() => svc.close());

  it('prints the server version and license (real launcher)', async () => {
    const result = await spawnCli(['version', '--base-url', svc.baseUrl]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('svc 1.42.0 (commit a1b2c3d)');
    expect(result.stdout).toMatch(/license\s+AGPL-3.0-only/);
  });

  it('reads SVC_BASE_URL and prints JSON with --json', async () => {
    const result = await runCli(['version', '--json'], { env: { SVC_BASE_URL: svc.baseUrl } });
    expect(JSON.parse(result.stdout)).toMatchObject({ version: '1.42.0', commit: 'a1b2c3d', product: 'svc' });
  });

  it('sends no token, even when one is set', async () => {
    await runCli(['version', '--base-url', svc.baseUrl], { env: { SVC_TOKEN: 'person-abc', SVC_BOT_TOKEN: 'x' } });
    expect(svc.requests().at(-1)!.headers.authorization).toBeUndefined();
  });

  it('exits 1 with one line when the server answers an error', async () => {
    const broken = await listen((_req, res) => void res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"down for maintenance"}'));
    try {
      const result = await runCli(['version', '--base-url', broken.url]);
      expect(result.code).toBe(1);
      expectOneLine(result.stderr);
      expect(result.stderr).toContain('svc_api_error: GET /api/version: svc answered 503: down for maintenance');
    } finally {
      await broken.close();
    }
  });

  it('exits 1 when the answer is not JSON', async () => {
    const html = await listen((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'));
    try {
      const result = await runCli(['version', '--base-url', html.url]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('invalid_response');
    } finally {
      await html.close();
    }
  });

  it.each([
    ['no base url', ['version'], 'pass --base-url or set SVC_BASE_URL'],
    ['a base url that is not a URL', ['version', '--base-url', 'svc.example.com'], 'invalid_base_url'],
    ['a base url with a query', ['version', '--base-url', 'https://svc.example.com/?token=abc'], 'must not carry credentials, a query'],
    ['an extra argument', ['version', 'now'], 'takes no arguments'],
  ])('exits 2 for %s', async (_case, args, message) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr);
    expect(result.stderr).toContain(message);
  });
});
