import express from 'express';
import request from 'supertest';
import { createWebHandler, svcBoardWebhook, svcBotWebhook, type BoardWebhookOptions, type ErrorContext } from '../../src';
import { BODY_TIMEOUT_MS } from '../../src/capture/body-bounds';
import { readWebBody } from '../../src/capture/read-web-body';
import { boardEvent, botCommand, botUpdate, signBoardEvent, signBotUpdate, silentLogger, type SignedDelivery } from '../../src/testing';
import { deferred, memoryLogger } from '../support/apps';

type RequestBody = NonNullable<RequestInit['body']>;

const secret = 'web-handler-secret-0123456789';

function webRequest(signed: SignedDelivery, init: { headers?: Record<string, string>; body?: RequestBody; path?: string; method?: string } = {}): Request {
  const headers = new Headers(signed.headers);
  for (const [name, value] of Object.entries(init.headers ?? {})) headers.append(name, value);
  return new Request(`http://127.0.0.1${init.path ?? '/webhooks/board'}`, {
    method: init.method ?? 'POST',
    headers,
    body: init.body ?? signed.body,
    duplex: 'half',
  } as RequestInit);
}

interface Answer {
  status: number;
  code: string | undefined;
  retryAfter: string | undefined;
  contentType: string | undefined;
}

async function viaWeb(handler: (r: Request) => Promise<Response>, req: Request): Promise<Answer> {
  const res = await handler(req);
  const body = (await res.json()) as { code?: string };
  return {
    status: res.status,
    code: body.code,
    retryAfter: res.headers.get('retry-after') ?? undefined,
    contentType: res.headers.get('content-type') ?? undefined,
  };
}

async function viaExpress(app: express.Express, signed: SignedDelivery, extra: Record<string, string> = {}): Promise<Answer> {
  let req = request(app).post('/webhooks/board');
  for (const [name, value] of Object.entries({ ...signed.headers, ...extra })) req = req.set(name, value);
  const res = await req.send(signed.body);
  return { status: res.status, code: res.body.code, retryAfter: res.headers['retry-after'], contentType: res.headers['content-type'] };
}

type Scenario = [
  string,
  (options: Partial<BoardWebhookOptions>) => {
    signed: SignedDelivery;
    extra?: Record<string, string>;
    options?: Partial<BoardWebhookOptions>;
    setup?: (board: ReturnType<typeof svcBoardWebhook>) => void;
  },
];

const scenarios: Scenario[] = [
  ['a valid delivery', () => ({ signed: signBoardEvent(boardEvent('task.created'), { secret }) })],
  ['a forged delivery', () => ({ signed: signBoardEvent(boardEvent('task.created'), { secret: 'another-secret-0123456789' }) })],
  ['a stale timestamp', () => ({ signed: signBoardEvent(boardEvent('ping'), { secret, timestamp: Math.floor(Date.now() / 1000) - 3600 }) })],
  ['a text/plain body', () => ({ signed: signBoardEvent(boardEvent('ping'), { secret }), extra: { 'Content-Type': 'text/plain' } })],
  ['a gzip body', () => ({ signed: signBoardEvent(boardEvent('ping'), { secret }), extra: { 'Content-Encoding': 'gzip' } })],
  ['invalid JSON', () => ({ signed: signBoardEvent('{"id":', { secret }) })],
  [
    'an id that differs from X-Svc-Delivery',
    () => ({ signed: signBoardEvent(boardEvent('ping'), { secret, deliveryId: '6f1c2a9e-0000-4000-8000-000000000000' }) }),
  ],
  ['a schema violation', () => ({ signed: signBoardEvent(boardEvent('task.created', { task: { title: 42 as unknown as string } }), { secret }) })],
  [
    'a handler that throws',
    () => ({
      signed: signBoardEvent(boardEvent('task.created'), { secret }),
      setup: (board) =>
        board.on('task.created', () => {
          throw new Error('boom');
        }),
    }),
  ],
  [
    'a handler past its deadline',
    () => ({
      signed: signBoardEvent(boardEvent('task.created'), { secret }),
      options: { timeoutMs: 20 },
      setup: (board) => board.on('task.created', () => new Promise(() => undefined)),
    }),
  ],
  ['a webhook that is closing', () => ({ signed: signBoardEvent(boardEvent('ping'), { secret }), setup: (board) => void board.close() })],
];

describe('createWebHandler', () => {
  describe('answers exactly as the Express mount does', () => {
    it.each(scenarios)('%s', async (_name, make) => {
      const scenario = make({});
      const build = () => {
        const board = svcBoardWebhook({ secret, logger: silentLogger, ...scenario.options });
        scenario.setup?.(board);
        return board;
      };
      const fromExpress = await viaExpress(express().use(build()), scenario.signed, scenario.extra);
      const fromWeb = await viaWeb(createWebHandler(build()), webRequest(scenario.signed, { headers: scenario.extra ?? {} }));
      expect(fromWeb).toEqual(fromExpress);
    });

    it('a signature header sent twice: 401 signature_duplicated on both', async () => {
      const signed = signBoardEvent(boardEvent('ping'), { secret });
      const web = await viaWeb(
        createWebHandler(svcBoardWebhook({ secret, logger: silentLogger })),
        webRequest(signed, { headers: { 'X-Svc-Signature': signed.headers['X-Svc-Signature']! } }),
      );
      const res = await request(express().use(svcBoardWebhook({ secret, logger: silentLogger })))
        .post('/webhooks/board')
        .set(signed.headers)
        .set('X-Svc-Signature', [signed.headers['X-Svc-Signature']!, signed.headers['X-Svc-Signature']!] as unknown as string)
        .send(signed.body);
      expect(web).toMatchObject({ status: 401, code: 'signature_duplicated' });
      expect(res.body.code).toBe('signature_duplicated');
    });

    it('a delivery still running: 409 delivery_in_progress with Retry-After', async () => {
      const gate = deferred();
      const board = svcBoardWebhook({ secret, logger: silentLogger }).on('task.created', () => gate.promise);
      const handle = createWebHandler(board);
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const first = handle(webRequest(signed));
      const second = await viaWeb(handle, webRequest(signed));
      gate.resolve();
      expect(second).toMatchObject({ status: 409, code: 'delivery_in_progress', retryAfter: '8' });
      expect((await first).status).toBe(200);
    });
  });

  describe('handlers, de-dup and context', () => {
    it('runs the handler once; the repeat is a duplicate', async () => {
      const handler = jest.fn();
      const handle = createWebHandler(svcBoardWebhook({ secret, logger: silentLogger }).on('task.created', handler));
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const first = await handle(webRequest(signed));
      const second = await handle(webRequest(signed));
      expect(await first.json()).toEqual({ ok: true });
      expect(await second.json()).toEqual({ ok: true, duplicate: true });
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it('one webhook mounted in Express and as a Web handler shares its de-dup store', async () => {
      const handler = jest.fn();
      const board = svcBoardWebhook({ secret, logger: silentLogger }).on('task.created', handler);
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      await request(express().use(board)).post('/webhooks/board').set(signed.headers).send(signed.body).expect(200);
      const res = await createWebHandler(board)(webRequest(signed));
      expect(await res.json()).toEqual({ ok: true, duplicate: true });
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it('ctx.request is the Request it was given; there is no Node request (ctx.req is absent)', async () => {
      let seen: { request?: Request; req?: unknown; deliveryId?: string; receivedAt?: number } = {};
      const board = svcBoardWebhook({ secret, logger: silentLogger, now: () => 1_800_000_000_000, toleranceSeconds: 24 * 3600 }).on(
        'task.created',
        (_event, ctx) => {
          seen = { request: ctx.request, req: ctx.req, deliveryId: ctx.deliveryId, receivedAt: ctx.receivedAt };
        },
      );
      const event = boardEvent('task.created');
      const req = webRequest(signBoardEvent(event, { secret, timestamp: 1_800_000_000 }));
      expect((await createWebHandler(board)(req)).status).toBe(200);
      expect(seen.request).toBe(req);
      expect(seen.req).toBeUndefined();
      expect(seen.deliveryId).toBe(event.id);
      expect(seen.receivedAt).toBe(1_800_000_000_000);
    });

    it('under Express, ctx.request is a Fetch Request with the delivery’s method, path and headers', async () => {
      let seen: Request | undefined;
      const board = svcBoardWebhook({ secret, logger: silentLogger }).on('task.created', (_event, ctx) => {
        seen = ctx.request;
      });
      const event = boardEvent('task.created');
      const signed = signBoardEvent(event, { secret });
      await request(express().use(board)).post('/webhooks/board?x=1').set(signed.headers).send(signed.body).expect(200);
      expect(seen).toBeInstanceOf(Request);
      expect(seen!.method).toBe('POST');
      expect(new URL(seen!.url).pathname + new URL(seen!.url).search).toBe('/webhooks/board?x=1');
      expect(seen!.headers.get('x-svc-delivery')).toBe(event.id);
    });

    it('error handlers get the Request as ctx.request', async () => {
      const told = deferred<ErrorContext>();
      const board = svcBoardWebhook({ secret, logger: silentLogger }).onError((_error, ctx) => told.resolve(ctx));
      const req = webRequest(signBoardEvent(boardEvent('ping'), { secret: 'another-secret-0123456789' }));
      expect((await createWebHandler(board)(req)).status).toBe(401);
      const ctx = await told.promise;
      expect(ctx.request).toBe(req);
      expect(ctx.webhook).toBe('board');
    });

    it('a handler past the deadline is answered 503 handler_timeout and its signal is aborted', async () => {
      const aborted = deferred<boolean>();
      const board = svcBoardWebhook({ secret, logger: silentLogger, timeoutMs: 20 }).on('task.created', (_event, ctx) => {
        ctx.signal.addEventListener('abort', () => aborted.resolve(true));
        return new Promise(() => undefined);
      });
      const answer = await viaWeb(createWebHandler(board), webRequest(signBoardEvent(boardEvent('task.created'), { secret })));
      expect(answer).toMatchObject({ status: 503, code: 'handler_timeout', retryAfter: '1' });
      expect(await aborted.promise).toBe(true);
    });

    it('bot updates: routed by kind, commands included', async () => {
      const command = jest.fn();
      const handle = createWebHandler(svcBotWebhook({ secret, logger: silentLogger }).command('deploy', command));
      const signed = signBotUpdate(botCommand('deploy', 'prod'), { secret });
      const res = await handle(new Request('http://127.0.0.1/webhooks/bot', { method: 'POST', headers: signed.headers, body: signed.body }));
      expect(res.status).toBe(200);
      expect(command).toHaveBeenCalledTimes(1);
    });

    it('logs each delivery as the Express mount does', async () => {
      const log = memoryLogger();
      const event = boardEvent('task.created');
      await createWebHandler(svcBoardWebhook({ secret, logger: log.logger }))(webRequest(signBoardEvent(event, { secret })));
      const line = log.lines.find((l) => l.msg === 'delivery received');
      expect(line).toMatchObject({ webhook: 'board', deliveryId: event.id, kind: 'task.created', outcome: 'handled', status: 200 });
      expect(log.text()).not.toContain(secret);
    });
  });

  describe('with a secret resolver', () => {
    const boardA = '6f1c2a9e-0000-4000-8000-00000000000a';
    const secretA = 'secret-of-board-a-0123456789';
    const resolver = ({ boardId }: { boardId: string }) => (boardId === boardA ? secretA : undefined);

    it('verifies each board with its own secret, the board named by the body', async () => {
      const handler = jest.fn();
      const handle = createWebHandler(svcBoardWebhook({ secret: resolver, logger: silentLogger }).on('task.created', handler));
      const event = boardEvent('task.created', { board: { id: boardA } });
      expect((await handle(webRequest(signBoardEvent(event, { secret: secretA })))).status).toBe(200);
      const forged = await viaWeb(handle, webRequest(signBoardEvent(boardEvent('task.created', { board: { id: boardA } }), { secret })));
      expect(forged).toMatchObject({ status: 401, code: 'signature_mismatch' });
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it('takes the board from the Request’s path (`/webhooks/boards/:boardId`)', async () => {
      const handler = jest.fn();
      const handle = createWebHandler(
        svcBoardWebhook({ secret: resolver, logger: silentLogger, path: '/webhooks/boards/:boardId' }).on('task.created', handler),
      );
      const event = boardEvent('task.created', { board: { id: boardA } });
      const res = await handle(webRequest(signBoardEvent(event, { secret: secretA }), { path: `/webhooks/boards/${boardA}` }));
      expect(res.status).toBe(200);
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it('a bot’s secret by the bot id in the path; the handlers’ logger still runs', async () => {
      const botSecret = 'secret-of-bot-one-0123456789';
      const BOT_ID = '11111111-1111-4111-8111-111111111111';
      const handler = jest.fn((_data: unknown, ctx: { log: { info: (m: string) => void } }) => ctx.log.info('seen'));
      const bot = svcBotWebhook({ secret: ({ botId }) => (botId === BOT_ID ? botSecret : undefined), logger: silentLogger, path: '/webhooks/bots/:botId' }).on(
        'taskCreate',
        handler,
      );
      const signed = signBotUpdate(botUpdate('taskCreate', undefined, { botUserId: BOT_ID }), { secret: botSecret });
      const res = await createWebHandler(bot)(
        new Request(`http://127.0.0.1/webhooks/bots/${BOT_ID}`, { method: 'POST', headers: signed.headers, body: signed.body }),
      );
      expect(res.status).toBe(200);
      expect(handler).toHaveBeenCalledTimes(1);
    });
  });

  describe('the request body', () => {
    it('already read (request.bodyUsed): 500 body_already_consumed that says how to fix it', async () => {
      const req = webRequest(signBoardEvent(boardEvent('ping'), { secret }));
      await req.text();
      const res = await createWebHandler(svcBoardWebhook({ secret, logger: silentLogger }))(req);
      expect(res.status).toBe(500);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe('body_already_consumed');
      expect(body.message).toMatch(/request\.clone\(\)/);
    });

    it('locked by a reader that something else holds: 500 body_already_consumed', async () => {
      const req = webRequest(signBoardEvent(boardEvent('ping'), { secret }));
      req.body!.getReader();
      const answer = await viaWeb(createWebHandler(svcBoardWebhook({ secret, logger: silentLogger })), req);
      expect(answer).toMatchObject({ status: 500, code: 'body_already_consumed' });
    });

    it('shorter than its Content-Length: 400 body_read_failed', async () => {
      const signed = signBoardEvent(boardEvent('ping'), { secret });
      const answer = await viaWeb(
        createWebHandler(svcBoardWebhook({ secret, logger: silentLogger })),
        webRequest(signed, { headers: { 'Content-Length': String(signed.body.length + 10) } }),
      );
      expect(answer).toMatchObject({ status: 400, code: 'body_read_failed' });
    });

    it('a body stream that fails: 400 body_read_failed', async () => {
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.error(new Error('connection reset'));
        },
      });
      const answer = await viaWeb(
        createWebHandler(svcBoardWebhook({ secret, logger: silentLogger })),
        webRequest(signBoardEvent(boardEvent('ping'), { secret }), { body: stream }),
      );
      expect(answer).toMatchObject({ status: 400, code: 'body_read_failed' });
    });

    it('a body stalled past the sender’s 10 s: 408 body_timeout, and the stream is cancelled', async () => {
      jest.useFakeTimers();
      try {
        let cancelled = false;
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"id":'));
          },
          cancel() {
            cancelled = true;
          },
        });
        const reading = readWebBody(webRequest(signBoardEvent(boardEvent('ping'), { secret }), { body: stream }), 1024).catch((e: unknown) => e);
        await Promise.resolve();
        jest.advanceTimersByTime(BODY_TIMEOUT_MS);
        expect(await reading).toMatchObject({ code: 'body_timeout', status: 408 });
        expect(cancelled).toBe(true);
      } finally {
        jest.useRealTimers();
      }
    });
  });

  it('a request that is not a POST: 405 with Allow: POST', async () => {
    const res = await createWebHandler(svcBoardWebhook({ secret, logger: silentLogger }))(new Request('http://127.0.0.1/webhooks/board'));
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('anything but a webhook made by this library: a TypeError at setup', () => {
    expect(() => createWebHandler((() => undefined) as never)).toThrow(TypeError);
  });
});
