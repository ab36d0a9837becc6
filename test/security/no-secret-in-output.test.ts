/**
 * The canary test: every surface that writes something a person or another program reads is driven
 * with canary secrets and tokens, and fails if any output holds one of them, or a signature made
 * with one of them.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect, promisify } from 'node:util';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import express from 'express';
import pino from 'pino';
import type { WebhookLogger } from '../../src/internal/logging/logger';
import { createNodeHandler, memoryStore, svcBoardWebhook, svcBotWebhook, type DeliveryStore, type SvcWebhookError } from '../../src';
import { SvcClient } from '../../src/client';
import { createFakeSvc } from '../../src/testing';
import { deliveryInspector } from '../../examples/inspector/delivery-inspector';
import { runCli, tempFiles } from '../cli/run-cli';
import { startExampleServer } from '../support/example-server';
import { fixture, signBoard, signBot, type SignedRequest, onBoard } from '../support/sign';

// Shapes that have tripped redaction before: +, /, = and dots, an svc prefix, plain hex.
const BOARD_SECRET = 'canary-board-secret-+/=.0123456789';
const OTHER_BOARD_SECRET = 'canary-other-board-secret-0123456789';
const BOT_SECRET = 'canary-bot-secret-AAAAAAAAAAAAAAAA';
const PERSON_TOKEN = 'canary-person-token-+/=0123456789abcdef';
const OAUTH_TOKEN = 'svc_oa_CANARYCANARYCANARY.CANARY+/=';
const BOT_TOKEN = `svc_bot_${randomUUID()}_${'C'.repeat(43)}`;
const CANARIES = [BOARD_SECRET, OTHER_BOARD_SECRET, BOT_SECRET, PERSON_TOKEN, OAUTH_TOKEN, BOT_TOKEN, 'CANARY+/=', 'C'.repeat(43)];

/** Every signature made with a canary secret, by hex. */
const signatures = new Set<string>();
function signedBoard(event: Record<string, unknown>, secret = BOARD_SECRET, timestamp?: number): SignedRequest {
  const signed = signBoard(event, { secret, ...(timestamp === undefined ? {} : { timestamp }) });
  signatures.add(signed.headers['X-Svc-Signature']!.slice(3));
  return signed;
}
function signedBot(update: Record<string, unknown>, secret = BOT_SECRET): SignedRequest {
  const signed = signBot(update, { secret });
  signatures.add(signed.headers['X-Svc-Signature']!.slice(7));
  return signed;
}

/** Fails naming the surface and what leaked. */
function expectClean(surface: string, text: string): void {
  expect(text.length).toBeGreaterThan(0);
  const leaked = [...CANARIES, ...signatures].filter((canary) => text.includes(canary));
  expect({ surface, leaked }).toEqual({ surface, leaked: [] });
}

function capture(): { logger: pino.Logger; text: () => string } {
  const chunks: string[] = [];
  return { logger: pino({ level: 'trace' }, { write: (s: string) => void chunks.push(s) }), text: () => chunks.join('') };
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; base: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function post(base: string, path: string, signed: SignedRequest): Promise<string> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: signed.headers, body: signed.body });
  return `${res.status} ${JSON.stringify([...res.headers])} ${await res.text()}`;
}

/** Handlers that log the canaries in every way a careless handler might, at every level. */
function carelessLogging(ctx: { log: WebhookLogger; req?: { headers: object; rawHeaders: string[] } }, secret: string): void {
  // Handlers run in the request here (direct mode), so the request is there.
  const req = ctx.req!;
  const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
  // The webhook's logger is pino here, so the handlers' is too, with pino's every level.
  const log = ctx.log as pino.Logger;
  for (const level of levels) {
    log[level](
      { headers: req.headers, Headers: { ...req.headers }, raw: req.rawHeaders, config: { Secret: secret, nested: { token: PERSON_TOKEN } } },
      'careless',
    );
    log[level]({ note: `secret ${secret}, bearer ${OAUTH_TOKEN}`, err: new Error(`failed with ${secret}`) }, 'careless values');
    // The commonest idiom: an error alone, whose message pino makes the line's.
    log[level](new Error(`cannot connect with ${secret} as ${BOT_TOKEN}`));
    const signature = String((req.headers as Record<string, unknown>)['x-svc-signature']);
    log[level](`careless message with ${secret}, ${OAUTH_TOKEN} and ${signature}`);
    log[level]('careless %s interpolated', secret);
    const hex = signature.replace(/^[a-z0-9]+=/, '');
    log[level]({ sigs: [`V1=${hex}`, `SHA256=${hex}`, `/hook?sig_v1=${hex}`] }, 'careless spellings');
    log[level](
      { [`by ${secret}`]: 1, settings: new Settings(secret), json: { toJSON: () => ({ note: secret }) }, deep: nested({ note: secret }, 12) },
      'careless shapes',
    );
  }
}

/** A class of the handler's own, holding a secret as a field. */
class Settings {
  constructor(readonly webhookSecret: string) {}
}

/** `value` under `levels` objects of one field each. */
function nested(value: unknown, levels: number): Record<string, unknown> {
  let out: Record<string, unknown> = { deeper: value };
  for (let i = 1; i < levels; i++) out = { deeper: out };
  return out;
}

describe('no secret, token or signature in any output', () => {
  const errorsSeen: SvcWebhookError[] = [];

  it('receiver: logs at every level, answers, refusals, store and handler errors, errors given to user code (one secret)', async () => {
    const log = capture();
    let failStore = false;
    const inner = memoryStore();
    const store: DeliveryStore = {
      claim: (id, lease) => {
        if (failStore) throw new Error(`store down; config had ${BOARD_SECRET}`);
        return inner.claim(id, lease);
      },
      commit: (id, token) => inner.commit(id, token),
      release: (id, token) => inner.release(id, token),
    };
    const inspector = deliveryInspector();
    const board = svcBoardWebhook({ secret: [BOARD_SECRET, OTHER_BOARD_SECRET], logger: log.logger, store })
      .on('task.created', (_e, ctx) => carelessLogging(ctx, BOARD_SECRET))
      .on('task.updated', () => {
        throw new Error('handler failed');
      })
      .onError((err) => void errorsSeen.push(err))
      .onDelivery(inspector.add);
    const bot = svcBotWebhook({ secret: BOT_SECRET, logger: log.logger })
      .onAny((_d, ctx) => carelessLogging(ctx, BOT_SECRET))
      .onError((err) => void errorsSeen.push(err));
    const app = express().use(board).use(bot).use(inspector.router);
    const { server, base } = await listen(app);
    try {
      const answers: string[] = [];
      const created = fixture('board', 'task.created');
      answers.push(await post(base, board.path, signedBoard(created)));
      answers.push(await post(base, board.path, signedBoard(created))); // duplicate
      answers.push(await post(base, board.path, signedBoard(fixture('board', 'task.updated')))); // handler error
      answers.push(await post(base, board.path, signedBoard(fixture('board', 'ping'), BOARD_SECRET, 1))); // stale, signed with the real secret
      answers.push(await post(base, board.path, signedBoard({ ...fixture('board', 'ping'), sequence: -1 }))); // schema, signed with the real secret
      answers.push(await post(base, board.path, signedBoard(fixture('board', 'ping'), 'not-the-secret-0123456789abcdef')));
      failStore = true;
      answers.push(await post(base, board.path, signedBoard(fixture('board', 'ping'))));
      failStore = false;
      answers.push(await post(base, bot.path, signedBot(fixture('bot', 'messageCreate'))));
      answers.push(await post(base, bot.path, signedBot(fixture('bot', 'messageCreate'), 'not-the-bot-secret-0123456789abcd')));
      await new Promise((r) => setTimeout(r, 50));

      expectClean('responses', answers.join('\n'));
      expect(log.text()).toContain('careless');
      expectClean('log lines', log.text());
      expect(errorsSeen.length).toBeGreaterThanOrEqual(5);
      // The library's own text; `cause` is what the user's own handler or store threw, handed back unchanged.
      expectClean('errors given to onError', errorsSeen.map((e) => `${e.message} ${JSON.stringify(e)} ${e.stack} ${inspect({ ...e })}`).join('\n'));

      // The inspector and everything its page fetches.
      const fetched: string[] = [];
      for (const path of ['/inspector', '/inspector/inspector.js', '/inspector/inspector.css', '/inspector/deliveries'])
        fetched.push(await (await fetch(`${base}${path}`)).text());
      const events = await fetch(`${base}/inspector/events`);
      const reader = events.body!.getReader();
      fetched.push(new TextDecoder().decode((await reader.read()).value));
      await reader.cancel();
      expect(fetched.join('')).toContain('task.created');
      expectClean('inspector', fetched.join('\n'));
    } finally {
      inspector.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('receiver with a resolver: lookups, unknown boards, failures and refusals', async () => {
    const log = capture();
    const A = randomUUID();
    const B = randomUUID();
    let failing = false;
    const board = svcBoardWebhook({
      logger: log.logger,
      secret: ({ boardId }) => {
        if (failing) throw new Error(`vault said no for ${BOARD_SECRET}`);
        return { [A]: BOARD_SECRET, [B]: OTHER_BOARD_SECRET }[boardId];
      },
    })
      .on('task.created', (_e, ctx) => carelessLogging(ctx, BOARD_SECRET))
      // The middleware's own line about the failure carries what the handler threw.
      .on('task.updated', () => {
        throw new Error(`re-signing failed with ${BOARD_SECRET}`);
      })
      // A rotation during the handler: the secret leaves the resolver's cache before the handler logs.
      .on('task.archived', (_e, ctx) => {
        board.forgetSecret(A);
        ctx.log.info({ note: `old secret ${BOARD_SECRET}` }, 'after a rotation');
      });
    const { server, base } = await listen(createNodeHandler(board));
    try {
      const forA = onBoard(fixture('board', 'task.created'), A);
      const answers = [
        await post(base, board.path, signedBoard(forA)),
        await post(base, board.path, signedBoard({ ...forA, id: randomUUID() }, OTHER_BOARD_SECRET)),
        await post(base, board.path, signedBoard({ ...onBoard(forA, randomUUID()), id: randomUUID() })),
        await post(base, board.path, signedBoard(onBoard(fixture('board', 'task.updated'), A))),
      ];
      failing = true;
      const forB = onBoard(fixture('board', 'task.created'), B);
      answers.push(await post(base, board.path, signedBoard(forB, OTHER_BOARD_SECRET)));
      failing = false;
      answers.push(await post(base, board.path, signedBoard(onBoard(fixture('board', 'task.archived'), A))));
      expectClean('responses', answers.join('\n'));
      expect(log.text()).toContain('secret_unavailable');
      expect(log.text()).toContain('handler_failed');
      expect(log.text()).toContain('after a rotation');
      expectClean('log lines', log.text());
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('OpenTelemetry spans: what handlers threw, with fixed secrets and with a resolver', async () => {
    const spans = new InMemorySpanExporter();
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    const careless = (secret: string) => () => {
      throw Object.assign(new Error(`failed with ${secret}, ${BOT_TOKEN} and ${OAUTH_TOKEN}`), { code: `E_${secret}` });
    };
    const fixed = svcBoardWebhook({ secret: [OTHER_BOARD_SECRET, BOARD_SECRET], logger: pino({ level: 'silent' }) }).on('task.updated', careless(BOARD_SECRET));
    const resolved = svcBoardWebhook({ path: '/webhooks/boards', secret: () => OTHER_BOARD_SECRET, logger: pino({ level: 'silent' }) }).on(
      'task.updated',
      careless(OTHER_BOARD_SECRET),
    );
    const bot = svcBotWebhook({ secret: BOT_SECRET, logger: pino({ level: 'silent' }) }).onAny(careless(BOT_SECRET));
    const { server, base } = await listen(express().use(fixed).use(resolved).use(bot));
    try {
      await post(base, fixed.path, signedBoard(fixture('board', 'task.updated')));
      await post(base, '/webhooks/boards', signedBoard(fixture('board', 'task.updated'), OTHER_BOARD_SECRET));
      await post(base, bot.path, signedBot(fixture('bot', 'messageCreate')));
      const recorded = spans.getFinishedSpans().filter((s) => s.name === 'svc.webhook.handler');
      expect(recorded).toHaveLength(3);
      expect(recorded.every((s) => s.events.length === 1)).toBe(true);
      expectClean(
        'spans',
        JSON.stringify(spans.getFinishedSpans().map((s) => ({ name: s.name, status: s.status, attributes: s.attributes, events: s.events }))),
      );
    } finally {
      trace.disable();
      context.disable();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('every CLI command: output and errors, with svc echoing what it was sent', async () => {
    // An svc that echoes the request (token and secret included) in every answer, error or not.
    let status = 400;
    const echo = (async (input: string | URL | Request, init?: RequestInit) => {
      const said = `you sent ${String(init?.body ?? '')} with ${JSON.stringify(init?.headers ?? {})} to ${String(input)}`;
      const body =
        status === 200
          ? {
              url: 'https://hooks.example.com/x',
              enabled: true,
              secret: BOARD_SECRET,
              token: PERSON_TOKEN,
              note: said,
              ok: true,
              status: 200,
              version: said,
              product: said,
              commit: said,
            }
          : { message: said };
      return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    const files = tempFiles({ 'secret.txt': `${BOARD_SECRET}\n`, 'token.txt': PERSON_TOKEN, 'bot-token.txt': BOT_TOKEN, 'oauth.txt': OAUTH_TOKEN });
    const { server, base } = await listen(createNodeHandler(svcBoardWebhook({ secret: BOARD_SECRET, logger: pino({ level: 'silent' }) })));
    const output: string[] = [];
    const cli = async (args: string[], env: Record<string, string> = {}) => {
      const r = await runCli(args, { env: { SVC_BASE_URL: 'http://127.0.0.1:9', ...env }, fetch: echo });
      output.push(`${r.stdout}${r.stderr}`); // what the CLI printed, not the command line the test gave it
    };
    const captured = signedBoard(fixture('board', 'ping'));
    const capture = tempFiles({ 'headers.json': JSON.stringify(captured.headers), 'body.json': captured.body });
    try {
      for (const s of [400, 200]) {
        status = s;
        const hook = ['--url', 'https://hooks.example.com/x'];
        await cli(['board-webhook', 'set', '--board', 'b1', ...hook, '--secret', BOARD_SECRET], { SVC_TOKEN: PERSON_TOKEN });
        await cli(['board-webhook', 'set', '--board', 'b1', ...hook, '--secret-file', files.path('secret.txt'), '--json'], { SVC_TOKEN: PERSON_TOKEN });
        for (const action of ['get', 'delete', 'ping']) {
          await cli(['board-webhook', action, '--board', 'b1'], { SVC_TOKEN: PERSON_TOKEN });
          await cli(['board-webhook', action, '--board', 'b1', '--token-file', files.path('token.txt'), '--json']);
        }
        await cli(['bot-webhook', 'set', ...hook, '--secret', BOT_SECRET], { SVC_BOT_TOKEN: BOT_TOKEN });
        await cli(['bot-webhook', 'get', '--token-file', files.path('bot-token.txt')]);
        await cli(['bot-webhook', 'delete'], { SVC_BOT_TOKEN: BOT_TOKEN });
        await cli(['bot-webhook', 'get'], { SVC_BOT_TOKEN: OAUTH_TOKEN });
        await cli(['board-webhook', 'get', '--board', 'b1', '--token-file', files.path('oauth.txt')]);
        await cli(['version']);
        await cli(['status', '--board', 'b1', '--bot', '--json'], { SVC_TOKEN: PERSON_TOKEN, SVC_BOT_TOKEN: BOT_TOKEN });
        await cli(['status', '--board', 'b1', '--token-file', files.path('token.txt')]);
        await cli(['board-webhook', 'reenable', 'b1', '--secret-file', files.path('secret.txt')], { SVC_TOKEN: PERSON_TOKEN });
        await cli(['board-webhook', 'reenable', 'b1', '--json', '--url', 'https://hooks.example.com/x'], {
          SVC_TOKEN: PERSON_TOKEN,
          SVC_WEBHOOK_SECRET: BOARD_SECRET,
        });
      }
      // A token refused on the command line, and secrets that are not svc's shape.
      await cli(['board-webhook', 'get', '--board', 'b1', `--token=${PERSON_TOKEN}`]);
      await cli(['bot-webhook', 'set', '--url', 'https://hooks.example.com/x', '--secret', BOT_TOKEN], { SVC_BOT_TOKEN: BOT_TOKEN });
      await cli(['send', 'task.created', '--url', `${base}/webhooks/board`, '--secret', BOARD_SECRET]);
      await cli(['send', 'task.created', '--url', `${base}/webhooks/board`, '--secret', OTHER_BOARD_SECRET]);
      await cli(['send', 'ping', '--url', 'http://127.0.0.1:9/nothing'], { SVC_WEBHOOK_SECRET: BOARD_SECRET });
      // Batches, edits, and a secret pasted where a flag wanted another value.
      const toBoard = ['--url', `${base}/webhooks/board`, '--secret', BOARD_SECRET];
      await cli(['send', 'task.updated', '--count', '4', '--shuffle', '--duplicates', '0.5', '--set', 'task.title=canary', ...toBoard]);
      await cli(['send', 'task.created', '--id', randomUUID(), '--board', randomUUID(), ...toBoard]);
      for (const flag of ['--set', '--id', '--board', '--count']) await cli(['send', 'task.created', flag, OTHER_BOARD_SECRET, ...toBoard]);
      await cli(['send', 'task.created', '--set', `task.title.x=${OTHER_BOARD_SECRET}`, ...toBoard]);
      await cli(['send', 'task.created', '--count', '2', '--duplicates', OTHER_BOARD_SECRET, ...toBoard]);
      await cli(['send', 'task.created', '--count', '2', '--shuffle', '--seed', OTHER_BOARD_SECRET, ...toBoard]);
      await cli(['verify', '--headers', capture.path('headers.json'), '--body', capture.path('body.json'), '--secret-file', files.path('secret.txt')]);
      await cli([
        'verify',
        '--headers',
        capture.path('headers.json'),
        '--body',
        capture.path('body.json'),
        '--secret',
        OTHER_BOARD_SECRET,
        '--secret',
        BOT_SECRET,
      ]);
      expect(output.join('\n')).toContain('svc_api_error');
      expectClean('CLI', output.join('\n'));
    } finally {
      files.cleanup();
      capture.cleanup();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("the svc emulator: every route's answer, refusals, deliveries' errors and the control routes", async () => {
    // A receiver that answers 500, so that lastError, the audit and the ping's answer carry an error.
    const { server, base } = await listen((_req, res) => void res.writeHead(500).end('down'));
    const svc = await createFakeSvc({ clock: 'manual', allowLoopback: true });
    const said: string[] = [];
    const call = async (method: string, path: string, token?: string, body?: unknown) => {
      const res = await fetch(`${svc.baseUrl}${path}`, {
        method,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      said.push(`${res.status} ${JSON.stringify([...res.headers])} ${await res.text()}`);
    };
    try {
      const board = `/api/boards/${svc.board.id}/webhook`;
      await call('PUT', board, svc.person.token, { url: `${base}/hook`, secret: BOARD_SECRET });
      await call('PUT', '/api/bots/me/webhook', svc.bot.token, { url: `${base}/bot`, secret: BOT_SECRET });
      await call('PUT', board, svc.person.token, { url: 'https://10.0.0.1/x', secret: OTHER_BOARD_SECRET });
      await call('PUT', board, svc.person.token, { url: `${base}/hook`, secret: 'short' });
      for (const token of [PERSON_TOKEN, OAUTH_TOKEN, BOT_TOKEN, svc.bot.token]) await call('GET', board, token);
      svc.emitBoardEvent({ type: 'task.created' });
      svc.emitBotUpdate({ kind: 'messageCreate' });
      await svc.advance(60 * 60 * 1000);
      await call('POST', `${board}/ping`, svc.person.token);
      await call('POST', `${board}/ping`, svc.person.token);
      await call('GET', board, svc.person.token);
      await call('GET', '/api/bots/me/webhook', svc.bot.token);
      await call('GET', '/_emulator');
      await call('GET', '/_emulator/audit');
      said.push(
        JSON.stringify([svc.audit.deliveries(), svc.audit.attempts(), svc.webhook({ boardId: svc.board.id }), svc.boards()]),
        inspect(svc, { depth: 2 }).replaceAll(svc.person.token, '').replaceAll(svc.bot.token, ''),
      );
      expect(said.join('\n')).toContain('receiver answered 500');
      expectClean('svc emulator', said.join('\n'));
      // The tokens svc issued never come back in an answer either (the start tokens are the test's own).
      const answers = said.slice(0, -1).join('\n');
      expect([answers.includes(svc.person.token), answers.includes(svc.bot.token)]).toEqual([false, false]);
    } finally {
      await svc.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('setup errors of the middleware, and a resolver answering a secret svc would never use', async () => {
    const texts: string[] = [];
    const tooLong = `${BOARD_SECRET}${'x'.repeat(300)}`;
    for (const options of [
      { secret: tooLong },
      { secret: [BOARD_SECRET, tooLong] },
      { secret: BOARD_SECRET, path: `/hooks/:${BOARD_SECRET}` },
      { secret: BOARD_SECRET, bogus: BOARD_SECRET },
    ]) {
      try {
        svcBoardWebhook(options as never);
        texts.push('no error');
      } catch (err) {
        texts.push(`${String(err)} ${inspect(err)}`);
      }
    }
    expect(texts.join('\n')).not.toContain('no error');
    const log = capture();
    const board = svcBoardWebhook({ logger: log.logger, secret: () => tooLong });
    const { server, base } = await listen(createNodeHandler(board));
    try {
      const event = fixture('board', 'ping');
      texts.push(await post(base, board.path, signedBoard(event)));
      expect(log.text()).toContain('secret_unavailable');
      texts.push(log.text());
      expectClean('setup errors and invalid resolver answers', texts.join('\n'));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('setup client errors, however they are printed', async () => {
    const echo = (async (_input: string | URL | Request, init?: RequestInit) =>
      new Response(JSON.stringify({ message: `echo ${String(init?.body)} ${JSON.stringify(init?.headers)}` }), { status: 400 })) as typeof fetch;
    const texts: string[] = [];
    const person = new SvcClient({ baseUrl: 'https://svc.example.com', token: PERSON_TOKEN, fetch: echo });
    const bot = new SvcClient({ baseUrl: 'https://svc.example.com', token: BOT_TOKEN, fetch: echo });
    texts.push(inspect(person), inspect(bot), JSON.stringify(person));
    const attempts: Array<() => Promise<unknown>> = [
      () => person.setBoardWebhook('b1', { url: 'https://hooks.example.com/x', secret: BOARD_SECRET }),
      () => person.getBoardWebhook('b1'),
      () => bot.setBotWebhook({ url: 'https://hooks.example.com/x', secret: BOT_SECRET }),
      () => bot.setBotWebhook({ url: 'https://hooks.example.com/x', secret: BOT_TOKEN }),
      () => person.setBoardWebhook('b1', { url: 'http://10.0.0.1/x', secret: BOARD_SECRET }),
      async () => new SvcClient({ baseUrl: 'http://svc.example.com', token: PERSON_TOKEN }),
      async () => new SvcClient({ baseUrl: `https://user:${PERSON_TOKEN}@svc.example.com`, token: PERSON_TOKEN }),
      async () => new SvcClient({ baseUrl: 'https://svc.example.com', token: OAUTH_TOKEN }),
    ];
    for (const attempt of attempts) {
      const err = await attempt().then(
        () => new Error('expected a failure'),
        (e: unknown) => e as Error,
      );
      texts.push(`${err.message} ${String(err)} ${JSON.stringify(err)} ${inspect(err, { depth: 5 })}`);
    }
    expect(texts.join('\n')).toContain('SvcClientError');
    expectClean('setup client errors', texts.join('\n'));
  });

  it("the example server's startup, on real secrets", async () => {
    const server = await startExampleServer({ HOST: '127.0.0.1', SVC_BOT_WEBHOOK_SECRET: BOT_SECRET, SVC_BOARD_WEBHOOK_SECRET: BOARD_SECRET }, 20_000);
    try {
      // The startup commands, run: what they print and what the server logs stays clean too.
      const ping = server
        .output()
        .split('\n')
        .find((l) => l.startsWith('id='))!;
      const { stdout } = await promisify(execFile)('bash', ['-c', ping], { env: { ...process.env, SVC_BOARD_WEBHOOK_SECRET: BOARD_SECRET } });
      await new Promise((r) => setTimeout(r, 200));
      const out = server.output() + stdout;
      expect(out).toContain('ping received');
      expect(out).not.toMatch(/[0-9a-f]{64}/);
      expectClean('example server', out);
    } finally {
      await server.stop();
    }
  }, 30_000);
});
