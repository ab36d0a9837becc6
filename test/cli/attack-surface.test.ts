import { redactSecrets } from '../../src';
import { boardEvent, signBoardEvent } from '../../src/testing';
import { runCli, tempFiles } from './run-cli';

const TOKEN = 'person-token-+/=0123456789abcdef';
const SECRET = 'webhook-secret-+/=0123456789abcdef';
const BOARD = '88f7b448-895e-49f0-9eca-ab4ee416bab1';

/** A stand-in for svc that answers every call with `status` and `body`, and counts the calls. */
function answering(status: number, body: unknown): { fetch: typeof fetch; calls: () => number } {
  let calls = 0;
  const fake = (async () => {
    calls++;
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { fetch: fake, calls: () => calls };
}

const base = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_TOKEN: TOKEN };

describe('the CLI facing a hostile or careless svc', () => {
  it('never prints the token or secret it holds, even when svc echoes them in an error', async () => {
    const svc = answering(400, { message: `bad secret ${SECRET} for token ${TOKEN} (Bearer ${TOKEN})` });
    const result = await runCli(['board-webhook', 'set', '--board', BOARD, '--url', 'https://hooks.example.com/x', '--secret', SECRET], { env: base, fetch: svc.fetch });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('svc_api_error');
    for (const out of [result.stdout, result.stderr]) {
      expect(out).not.toContain(SECRET);
      expect(out).not.toContain(TOKEN);
    }
  });

  it('redacts a whole svc token after its prefix, dots, "+", "/" and "=" included', () => {
    const token = 'svc_oa_AAAAAAAAAAAAAAAAAAAA.BBBB+CC/DD=';
    const text = redactSecrets(`Authorization: Bearer ${token} end`);
    expect(text).not.toContain('BBBB');
    expect(text).not.toContain('CC/DD');
    expect(text).toContain(' end');
  });

  it('strips control characters (terminal escapes) from what svc answers', async () => {
    const svc = answering(200, { product: 'svc\u001b]0;owned\u0007', version: '1\u001b[2J', commit: 'abc\r\u009b', license: 'x\u202e' });
    const result = await runCli(['version'], { env: base, fetch: svc.fetch });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    // Field names and nested values come from svc too: C1 controls and bidirectional overrides survive JSON.
    const fields = answering(200, { url: 'https://hooks.example.com/x', 'x\u001b]0;owned\u0007\u001b[2J': 'y', nested: { note: 'a\u009b31mb\u202ec' } });
    const shown = await runCli(['board-webhook', 'get', '--board', BOARD], { env: base, fetch: fields.fetch });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('nested');
    expect(shown.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    const failing = answering(500, { message: 'oops\u001b[31m red' });
    const error = await runCli(['board-webhook', 'get', '--board', BOARD], { env: base, fetch: failing.fetch });
    expect(error.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });

  it('sends the token over plain http only to this machine, unless --allow-insecure-http', async () => {
    const svc = answering(200, { url: 'https://hooks.example.com/x', enabled: true });
    const env = { SVC_BASE_URL: 'http://svc.example.com', SVC_TOKEN: TOKEN };
    const refused = await runCli(['board-webhook', 'get', '--board', BOARD], { env, fetch: svc.fetch });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('invalid_base_url');
    expect(svc.calls()).toBe(0);
    const allowed = await runCli(['board-webhook', 'get', '--board', BOARD, '--allow-insecure-http'], { env, fetch: svc.fetch });
    expect(allowed.code).toBe(0);
    expect(svc.calls()).toBe(1);
    await runCli(['board-webhook', 'get', '--board', BOARD], { env: { ...env, SVC_BASE_URL: 'http://localhost:9' }, fetch: svc.fetch });
    expect(svc.calls()).toBe(2);
  });

  it('says in every help to prefer --secret-file or the environment over --secret', async () => {
    for (const command of ['send', 'verify', 'board-webhook', 'bot-webhook']) {
      const help = (await runCli([command, '--help'])).stdout;
      expect(help).toContain('--secret-file');
      expect(help).toContain('shell history');
    }
  });

  // Complexity regression tests: the limit is generous; a quadratic regex takes many seconds here.
  describe('on 200 KB of spaces', () => {
    const spaces = ' '.repeat(200 * 1024);

    it('reports an error message holding them quickly', async () => {
      const svc = answering(200, { ok: false, status: 500, error: `a${spaces}b\n${spaces}c` });
      const started = performance.now();
      const result = await runCli(['board-webhook', 'ping', '--board', BOARD], { env: base, fetch: svc.fetch });
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(result.code).toBe(1);
    });

    it('parses a captured header line holding them quickly, and diagnoses a body ending in them quickly', async () => {
      const signed = signBoardEvent(boardEvent('ping'), { secret: SECRET });
      const headers = Object.entries(signed.headers).map(([k, v]) => `${k}:${spaces}${v}${spaces}x`).join('\n');
      const files = tempFiles({ 'headers.txt': headers, 'body.json': `${signed.body}${spaces}x`, 'secret.txt': SECRET });
      try {
        const started = performance.now();
        const result = await runCli(['verify', '--headers', files.path('headers.txt'), '--body', files.path('body.json'), '--secret-file', files.path('secret.txt')]);
        expect(performance.now() - started).toBeLessThan(2_000);
        expect(result.code).toBe(1);
      } finally {
        files.cleanup();
      }
    });
  });
});

describe('the test kit', () => {
  it('refuses an override with a __proto__ key instead of copying it into Object.prototype', () => {
    const hostile = JSON.parse('{"__proto__":{"polluted":"yes"}}');
    expect(() => boardEvent('ping', hostile)).toThrow(TypeError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
