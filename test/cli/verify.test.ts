import express from 'express';
import request from 'supertest';
import { svcBoardWebhook, svcBotWebhook } from '../../src';
import { boardEvent, botUpdate, signBoardEvent, signBotUpdate, silentLogger, type SignedDelivery } from '../../src/testing';
import { expectOneLine, runCli, spawnCli, tempFiles } from './run-cli';

const SECRET = 'verify-test-secret-0123456789';
const OTHER_SECRET = 'another-secret-9876543210';
const now = Math.floor(Date.now() / 1000);

function headerLines(headers: Record<string, string>): string {
  return `POST /webhooks/board HTTP/1.1\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n')}\n`;
}

/** Writes a captured request and runs verify on it. */
async function verify(signed: SignedDelivery, extra: string[] = [], options: { body?: string | Buffer; headers?: string; spawn?: boolean } = {}) {
  const files = tempFiles({ 'headers.txt': options.headers ?? headerLines(signed.headers), 'body.json': options.body ?? signed.body });
  try {
    const args = ['verify', '--headers', files.path('headers.txt'), '--body', files.path('body.json'), ...extra];
    return await (options.spawn ? spawnCli(args) : runCli(args));
  } finally {
    files.cleanup();
  }
}

function expectInvalid(result: { code: number; stderr: string; stdout: string }, code: string, words: string): void {
  expect(result.code).toBe(1);
  expectOneLine(result.stderr);
  expect(result.stderr).toContain(`invalid: ${code}: `);
  expect(result.stderr).toContain(words);
  expect(result.stdout).toBe('');
}

describe('svc-webhooks verify', () => {
  const event = boardEvent('task.created');
  const signed = signBoardEvent(event, { secret: SECRET });

  describe('a correctly signed request', () => {
    it('is valid, through the real launcher', async () => {
      const result = await verify(signed, ['--secret', SECRET], { spawn: true });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        new RegExp(`^valid: board delivery ${event.id} \\(task.created\\) is correctly signed with the secret; timestamp \\d+ s old`),
      );
    });

    it('is valid for a bot update', async () => {
      const result = await verify(signBotUpdate(botUpdate('botCallback'), { secret: SECRET }), ['--secret', SECRET]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('valid: bot delivery');
    });

    it('names which secret matched during a rotation', async () => {
      const result = await verify(signed, ['--secret', OTHER_SECRET, '--secret', SECRET]);
      expect(result.stdout).toContain('signed with secret 2 of 2');
    });

    it('reads JSON headers, -H headers and the secret from the environment', async () => {
      const files = tempFiles({ 'h.json': JSON.stringify(signed.headers), 'b.json': signed.body });
      try {
        const fromJson = await runCli(['verify', '--headers', files.path('h.json'), '--body', files.path('b.json')], { env: { SVC_WEBHOOK_SECRET: SECRET } });
        expect(fromJson.code).toBe(0);
        const dashH = Object.entries(signed.headers).flatMap(([n, v]) => ['-H', `${n}: ${v}`]);
        const fromArgs = await runCli(['verify', ...dashH, '--body', files.path('b.json'), '--secret', SECRET]);
        expect(fromArgs.code).toBe(0);
      } finally {
        files.cleanup();
      }
    });
  });

  describe('says why a request fails', () => {
    it('wrong secret', async () => {
      expectInvalid(await verify(signed, ['--secret', OTHER_SECRET], { spawn: true }), 'wrong_secret', 'the body looks intact');
    });

    it('wrong secret: a newline around it', async () => {
      // A file's one final newline is dropped; a second one is not.
      const files = tempFiles({ secret: `${SECRET}\n\n` });
      try {
        expectInvalid(await verify(signed, ['--secret-file', files.path('secret')]), 'wrong_secret', 'whitespace around it');
      } finally {
        files.cleanup();
      }
    });

    it('stale timestamp, and valid as of --now', async () => {
      const old = signBoardEvent(event, { secret: SECRET, timestamp: now - 3600 });
      expectInvalid(
        await verify(old, ['--secret', SECRET, '--now', String(now)]),
        'timestamp_out_of_tolerance',
        'the signature matches the secret, but X-Svc-Timestamp is 3600 s old',
      );
      expect((await verify(old, ['--secret', SECRET, '--now', String(now - 3590)])).code).toBe(0);
    });

    it('timestamp in the future', async () => {
      const ahead = signBoardEvent(event, { secret: SECRET, timestamp: now + 900 });
      expectInvalid(await verify(ahead, ['--secret', SECRET]), 'timestamp_out_of_tolerance', 's in the future');
    });

    it('body changed: pretty-printed', async () => {
      const result = await verify(signed, ['--secret', SECRET], { body: JSON.stringify(event, null, 2) });
      expectInvalid(result, 'body_changed', 'the JSON was re-formatted');
    });

    it('body changed: a newline added at the end', async () => {
      expectInvalid(await verify(signed, ['--secret', SECRET], { body: `${signed.body}\n` }), 'body_changed', 'a newline was added at the end');
    });

    it('body changed: another delivery', async () => {
      const other = JSON.stringify(boardEvent('task.created'));
      expectInvalid(await verify(signed, ['--secret', SECRET], { body: other }), 'body_changed', 'its id differs from X-Svc-Delivery');
    });

    it('body changed: length differs from Content-Length', async () => {
      const headers = headerLines({ ...signed.headers, 'Content-Length': String(signed.body.length) });
      const edited = signed.body.replace('ENG-42', 'ENG-4242');
      expectInvalid(await verify(signed, ['--secret', SECRET], { headers, body: edited }), 'body_changed', `Content-Length says ${signed.body.length} bytes`);
    });

    it.each([
      ['signature_missing', 'no signature header', { 'X-Svc-Signature': undefined }, 'no X-Svc-Signature header'],
      ['signature_malformed', 'truncated hex', { 'X-Svc-Signature': 'v1=abc' }, 'has 3 hex digits after v1=, expected 64'],
      ['signature_malformed', 'not hex', { 'X-Svc-Signature': `v1=${'z'.repeat(64)}` }, 'other than hex digits'],
      ['signature_malformed', 'two signatures joined by a proxy', { 'X-Svc-Signature': `v1=${'a'.repeat(64)}, v1=${'b'.repeat(64)}` }, 'joined by ","'],
      ['timestamp_missing', 'no timestamp header', { 'X-Svc-Timestamp': undefined }, 'needs X-Svc-Timestamp'],
      ['timestamp_malformed', 'milliseconds', { 'X-Svc-Timestamp': String(now * 1000) }, 'looks like milliseconds'],
      ['timestamp_malformed', 'an ISO date', { 'X-Svc-Timestamp': new Date().toISOString() }, 'decimal seconds'],
    ])('%s: %s', async (code, _case, change, words) => {
      const headers: Record<string, string | undefined> = { ...signed.headers, ...change };
      const kept = Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined));
      expectInvalid(await verify(signed, ['--secret', SECRET], { headers: headerLines(kept) }), code, words);
    });

    it('signature_duplicated', async () => {
      const headers = `${headerLines(signed.headers)}X-Svc-Signature: ${signed.headers['X-Svc-Signature']}\n`;
      expectInvalid(await verify(signed, ['--secret', SECRET], { headers }), 'signature_duplicated', 'more than once');
    });

    it('signature_malformed: a bot signature checked as a board delivery', async () => {
      const bot = signBotUpdate(botUpdate('botCallback'), { secret: SECRET });
      expectInvalid(await verify(bot, ['--secret', SECRET, '--webhook', 'board']), 'signature_malformed', 'uses the sha256= scheme of bot deliveries');
    });

    it('secret_invalid: the bot token passed as the secret', async () => {
      const token = `svc_bot_0b7e6a52-3f0e-4c8e-9d51-2f8a1c3b4d5e_${'A'.repeat(43)}`;
      const result = await verify(signed, ['--secret', token]);
      expectInvalid(result, 'secret_invalid', 'is an svc token');
      expect(result.stderr).not.toContain('A'.repeat(10));
    });
  });

  describe('agrees with the receiver', () => {
    const board = svcBoardWebhook({ secret: SECRET, logger: silentLogger });
    const bot = svcBotWebhook({ secret: SECRET, logger: silentLogger });
    const app = express().use(board).use(bot);

    it.each([
      ['a good board delivery', signed, signed.body, SECRET],
      ['a stale board delivery', signBoardEvent(event, { secret: SECRET, timestamp: now - 400 }), undefined, SECRET],
      ['another secret', signBoardEvent(event, { secret: OTHER_SECRET }), undefined, SECRET],
      ['an edited body', signed, signed.body.replace('ENG-42', 'ENG-43'), SECRET],
      ['a good bot delivery', signBotUpdate(botUpdate('taskCreate'), { secret: SECRET }), undefined, SECRET],
      ['a bot delivery under another secret', signBotUpdate(botUpdate('taskCreate'), { secret: OTHER_SECRET }), undefined, SECRET],
    ])('on %s', async (_case, delivery, body, secret) => {
      const sent = body ?? delivery.body;
      const path = delivery.headers['X-Svc-Timestamp'] === undefined ? '/webhooks/bot' : '/webhooks/board';
      const response = await request(app).post(path).set(delivery.headers).send(sent);
      const result = await verify(delivery, ['--secret', secret], { body: sent });
      expect(result.code === 0).toBe(response.status === 200);
    });
  });

  describe('usage errors exit 2', () => {
    it.each([
      ['no --body', ['verify', '-H', 'X-Svc-Signature: v1=00', '--secret', SECRET], '--body <file> is required'],
      ['no headers', ['verify', '--body', 'package.json', '--secret', SECRET], 'give the captured headers'],
      ['no secret', ['verify', '--body', 'package.json', '-H', 'A: b'], 'the webhook secret is required'],
      ['a header line without a colon', ['verify', '--body', 'package.json', '-H', 'nonsense', '--secret', SECRET], 'is not "Name: value"'],
      ['a bad --now', ['verify', '--body', 'package.json', '-H', 'A: b', '--secret', SECRET, '--now', 'yesterday'], '--now must be a positive number'],
    ])('for %s', async (_case, args, message) => {
      const result = await runCli(args);
      expect(result.code).toBe(2);
      expectOneLine(result.stderr);
      expect(result.stderr).toContain(message);
    });

    it('exits 1 when a file is missing', async () => {
      const result = await runCli(['verify', '--body', 'nope.json', '-H', 'A: b', '--secret', SECRET]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('cannot read body file nope.json');
    });
  });
});
