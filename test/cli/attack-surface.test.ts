import { redactSecrets } from '../../src/client';
import { boardEvent, botUpdate, signBoardEvent, signBotUpdate } from '../../src/testing';
import { runCli, tempFiles } from './run-cli';

const TOKEN = 'person-token-+/=0123456789abcdef';
const SECRET = 'webhook-secret-+/=0123456789abcdef';
const BOARD = '88f7b448-895e-49f0-9eca-ab4ee416bab1';

/** A stand-in for svc that answers every call with `status` and `body`, and counts the calls. */
function answering(status: number, body: unknown): { fetch: typeof fetch; calls: () => number } {
  let calls = 0;
  const fake = (async () => {
    calls++;
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof fetch;
  return { fetch: fake, calls: () => calls };
}

const base = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_TOKEN: TOKEN };

describe('the CLI facing a hostile or careless svc', () => {
  it('never prints the token or secret it holds, even when svc echoes them in an error', async () => {
    const svc = answering(400, { message: `bad secret ${SECRET} for token ${TOKEN} (Bearer ${TOKEN})` });
    const result = await runCli(['board-webhook', 'set', '--board', BOARD, '--url', 'https://hooks.example.com/x'], {
      env: { ...base, SVC_WEBHOOK_SECRET: SECRET },
      fetch: svc.fetch,
    });
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
    // oxlint-disable-next-line no-control-regex -- control characters are what the output must not hold
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    // Field names and nested values come from svc too: C1 controls and bidirectional overrides survive JSON.
    const fields = answering(200, {
      url: 'https://hooks.example.com/x',
      'x\u001b]0;owned\u0007\u001b[2J': 'y',
      nested: { note: 'a\u009b31mb\u202ec' },
    });
    const shown = await runCli(['board-webhook', 'get', '--board', BOARD], { env: base, fetch: fields.fetch });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('nested');
    // oxlint-disable-next-line no-control-regex -- control characters are what the output must not hold
    expect(shown.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    const failing = answering(500, { message: 'oops\u001b[31m red' });
    const error = await runCli(['board-webhook', 'get', '--board', BOARD], { env: base, fetch: failing.fetch });
    // oxlint-disable-next-line no-control-regex -- control characters are what the output must not hold
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

  it('counts as this machine only names that never leave it: not *.localhost, which is resolved through DNS', async () => {
    const svc = answering(200, { url: 'https://hooks.example.com/x', enabled: true });
    for (const local of ['http://localhost:9', 'http://127.0.0.1:9', 'http://127.1.2.3:9', 'http://[::1]:9', 'http://[::ffff:127.0.0.1]:9']) {
      const result = await runCli(['board-webhook', 'get', '--board', BOARD], {
        env: { SVC_BASE_URL: local, SVC_TOKEN: TOKEN },
        fetch: svc.fetch,
      });
      expect([local, result.code]).toEqual([local, 0]);
    }
    const sent = svc.calls();
    for (const remote of [
      'http://svc.localhost:9',
      'http://localhost.:9',
      'http://localhost.localdomain:9',
      'http://127.0.0.1.nip.io:9',
      'http://[::ffff:10.0.0.1]:9',
      'http://0.0.0.0:9',
    ]) {
      const result = await runCli(['board-webhook', 'get', '--board', BOARD], {
        env: { SVC_BASE_URL: remote, SVC_TOKEN: TOKEN },
        fetch: svc.fetch,
      });
      expect([remote, result.code, result.stderr.includes('invalid_base_url')]).toEqual([remote, 2, true]);
    }
    expect(svc.calls()).toBe(sent);
  });

  it('says in every help to prefer --secret-file or the environment over --secret', async () => {
    for (const command of ['send', 'verify', 'board-webhook', 'bot-webhook']) {
      const help = (await runCli([command, '--help'])).stdout;
      expect(help).toContain('--secret-file');
      expect(help).toContain('shell history');
    }
  });

  // Complexity regression tests: the limit is generous; a quadratic regex takes many seconds here.
  it('parses 80 KB of repeated header lines quickly', async () => {
    const signed = signBoardEvent(boardEvent('ping'), { secret: SECRET });
    const lines = Object.entries(signed.headers).map(([k, v]) => `${k}: ${v}`);
    const repeated = Array.from({ length: 16 * 1024 }, () => 'X-Other: a').join('\n');
    const files = tempFiles({ 'headers.txt': `${lines.join('\n')}\n${repeated}`, 'body.json': signed.body, 'secret.txt': SECRET });
    try {
      expect(repeated.length).toBeGreaterThan(80 * 1024);
      const started = performance.now();
      const result = await runCli([
        'verify',
        '--headers',
        files.path('headers.txt'),
        '--body',
        files.path('body.json'),
        '--secret-file',
        files.path('secret.txt'),
      ]);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(result.code).toBe(0);
    } finally {
      files.cleanup();
    }
  });

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
      const headers = Object.entries(signed.headers)
        .map(([k, v]) => `${k}:${spaces}${v}${spaces}x`)
        .join('\n');
      const files = tempFiles({ 'headers.txt': headers, 'body.json': `${signed.body}${spaces}x`, 'secret.txt': SECRET });
      try {
        const started = performance.now();
        const result = await runCli([
          'verify',
          '--headers',
          files.path('headers.txt'),
          '--body',
          files.path('body.json'),
          '--secret-file',
          files.path('secret.txt'),
        ]);
        expect(performance.now() - started).toBeLessThan(2_000);
        expect(result.code).toBe(1);
      } finally {
        files.cleanup();
      }
    });
  });
});

/** ESC (a CSI and an OSC title), BEL, an 8-bit CSI, a carriage return and a right-to-left override. */
const HOSTILE_TEXT = 'x\u001b[2J\u001b]0;owned\u0007\u009b31m\r\u202eevil';
/** Anything a terminal acts on rather than shows; line breaks between lines aside. */
// oxlint-disable-next-line no-control-regex -- control characters are what the output must not hold
const TERMINAL_CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('the CLI printing what a sender or svc chose', () => {
  it('verify: the success line shows a hostile delivery id and event type without their control characters', async () => {
    const event = { ...boardEvent('ping'), id: `id-${HOSTILE_TEXT}`, type: `ping${HOSTILE_TEXT}` };
    const signed = signBoardEvent(event, { secret: SECRET });
    const files = tempFiles({ 'headers.json': JSON.stringify(signed.headers), 'body.json': signed.body, 'secret.txt': SECRET });
    try {
      const result = await runCli([
        'verify',
        '--headers',
        files.path('headers.json'),
        '--body',
        files.path('body.json'),
        '--secret-file',
        files.path('secret.txt'),
      ]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^valid: /);
      expect(result.stdout).not.toMatch(TERMINAL_CONTROLS);
    } finally {
      files.cleanup();
    }
  });

  it('send <file>: the line naming the delivery shows its id and type without their control characters', async () => {
    const event = { ...boardEvent('ping'), id: `id-${HOSTILE_TEXT}`, type: `ping${HOSTILE_TEXT}` };
    const files = tempFiles({ 'event.json': JSON.stringify(event) });
    const receiver = (async () => new Response('{"ok":true}', { status: 200, headers: { 'content-type': 'application/json' } })) as unknown as typeof fetch;
    try {
      const result = await runCli(['send', files.path('event.json'), '--url', 'http://127.0.0.1:9/hook', '--webhook', 'board'], {
        env: { SVC_WEBHOOK_SECRET: SECRET },
        fetch: receiver,
      });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('POST http://127.0.0.1:9/hook: board ping');
      expect(result.stdout).not.toMatch(TERMINAL_CONTROLS);
    } finally {
      files.cleanup();
    }
  });

  it('board-webhook set: a generated secret holding control characters is shown escaped, not acted on', async () => {
    const generated = `gen${HOSTILE_TEXT}-0123456789abcdef`;
    const svc = answering(200, { webhook: { url: 'https://hooks.example.com/x', enabled: true }, secret: generated });
    const result = await runCli(['board-webhook', 'set', '--board', BOARD, '--url', 'https://hooks.example.com/x'], {
      env: base,
      fetch: svc.fetch,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(TERMINAL_CONTROLS);
    // Escaped, so the secret can still be read back exactly.
    expect(result.stdout).toContain(
      JSON.stringify(generated).replace(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    );
  });

  it('--json: every answer of svc is printed as JSON without raw control characters, and parses back to the same values', async () => {
    const state = { url: 'https://hooks.example.com/x', lastError: HOSTILE_TEXT, [`key${HOSTILE_TEXT}`]: { nested: HOSTILE_TEXT } };
    const runs = [
      ['board-webhook', 'get', '--board', BOARD, '--json'],
      ['board-webhook', 'set', '--board', BOARD, '--url', 'https://hooks.example.com/x', '--json'],
      ['board-webhook', 'ping', '--board', BOARD, '--json'],
      ['version', '--json'],
    ];
    for (const args of runs) {
      const answer =
        args[1] === 'ping'
          ? { ok: true, status: 200, error: HOSTILE_TEXT }
          : args[1] === 'set'
            ? { webhook: state, secret: `s${HOSTILE_TEXT}-0123456789abcdef` }
            : args[0] === 'version'
              ? { version: HOSTILE_TEXT, commit: 'abc', product: 'svc' }
              : state;
      const result = await runCli(args, { env: base, fetch: answering(200, answer).fetch });
      expect([args.join(' '), result.code]).toEqual([args.join(' '), 0]);
      expect(result.stdout).not.toMatch(TERMINAL_CONTROLS);
      expect(JSON.stringify(JSON.parse(result.stdout))).toContain(JSON.stringify(HOSTILE_TEXT).slice(1, -1));
    }
    const bot = await runCli(['bot-webhook', 'get', '--json'], {
      env: { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_BOT_TOKEN: `svc_bot_${BOARD}_${'A'.repeat(43)}` },
      fetch: answering(200, state).fetch,
    });
    expect(bot.code).toBe(0);
    expect(bot.stdout).not.toMatch(TERMINAL_CONTROLS);
  });
});

describe('verify, against what the receiver checks', () => {
  const files = (signed: { headers: Record<string, string>; body: string }) =>
    tempFiles({ 'headers.json': JSON.stringify(signed.headers), 'body.json': signed.body, 'secret.txt': SECRET });
  const verify = (f: ReturnType<typeof tempFiles>) =>
    runCli(['verify', '--headers', f.path('headers.json'), '--body', f.path('body.json'), '--secret-file', f.path('secret.txt')]);

  it('says delivery_id_mismatch, not valid, when X-Svc-Delivery names another delivery than the signed body', async () => {
    for (const signed of [
      signBoardEvent(boardEvent('ping'), { secret: SECRET, deliveryId: '0f8fad5b-d9cb-469f-a165-70867728950e' }),
      signBotUpdate(botUpdate('messageCreate'), { secret: SECRET, deliveryId: '0f8fad5b-d9cb-469f-a165-70867728950e' }),
    ]) {
      const f = files(signed);
      try {
        const result = await verify(f);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('delivery_id_mismatch');
      } finally {
        f.cleanup();
      }
    }
  });

  it('says event_type_mismatch when X-Svc-Event names another type than the signed body', async () => {
    const f = files(signBoardEvent(boardEvent('ping'), { secret: SECRET, eventType: 'task.created' }));
    try {
      const result = await verify(f);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('event_type_mismatch');
    } finally {
      f.cleanup();
    }
  });

  it('still says valid for a delivery id the receiver takes as the same: a UUID in another case', async () => {
    const event = boardEvent('ping');
    const f = files(signBoardEvent(event, { secret: SECRET, deliveryId: event.id.toUpperCase() }));
    try {
      expect((await verify(f)).code).toBe(0);
    } finally {
      f.cleanup();
    }
  });
});

describe('the test kit', () => {
  it('refuses an override with a __proto__ key instead of copying it into Object.prototype', () => {
    const hostile = JSON.parse('{"__proto__":{"polluted":"yes"}}');
    expect(() => boardEvent('ping', hostile)).toThrow(TypeError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
