/**
 * The promise at its edges: every delivery handled, and handled once; no input crashes or hangs the
 * receiver. Each block is one edge a user can hit in production.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createNodeHandler, memoryStore, svcBoardWebhook, svcBotWebhook, type BoardWebhookOptions, type DeliveryStore } from '../../src';
import { appWith, deferred, expressVersions, memoryLogger, silentLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, fixture, hmacHex, signBoard, signBot } from '../support/sign';

const PATH = '/webhooks/board';
const tick = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Values user code can throw that break anything that reads them carelessly. */
function hostileThrowables(): Array<[string, unknown]> {
  const getterThrows = (key: string) =>
    Object.defineProperty({}, key, {
      get() {
        throw new Error(`the ${key} getter throws`);
      },
    });
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const withHostileCause = new Error('outer');
  (withHostileCause as { cause?: unknown }).cause = getterThrows('message');
  return [
    ['an object whose `message` getter throws', getterThrows('message')],
    ['an object whose `name` getter throws', getterThrows('name')],
    ['an object whose `stack` getter throws', getterThrows('stack')],
    [
      'an object whose `toString` throws',
      {
        toString() {
          throw new Error('no');
        },
      },
    ],
    ['a revoked Proxy', revoked.proxy],
    ['a frozen error', Object.freeze(new Error('frozen'))],
    ['an error whose cause is hostile', withHostileCause],
    [
      'a Proxy whose every trap throws',
      new Proxy(
        {},
        {
          get: () => {
            throw new Error('trap');
          },
          getPrototypeOf: () => {
            throw new Error('trap');
          },
          ownKeys: () => {
            throw new Error('trap');
          },
        },
      ),
    ],
    ['null', null],
    ['undefined', undefined],
    ['a symbol', Symbol('thrown')],
  ];
}

/** Counts unhandled rejections while a test runs: one would end a real process. */
function watchUnhandled(): { count: () => number; stop: () => void } {
  let n = 0;
  const listener = () => void n++;
  process.on('unhandledRejection', listener);
  return { count: () => n, stop: () => void process.off('unhandledRejection', listener) };
}

describe.each(expressVersions)('in %s', (_name, expressLib) => {
  describe('a handler that throws a hostile value', () => {
    it.each(hostileThrowables())('%s: answered 500 handler_failed as JSON, logged, onError told, nothing reaches Express', async (_what, thrown) => {
      const memory = memoryLogger();
      const { logger } = memory;
      const board = svcBoardWebhook({ secret: BOARD_SECRET, logger });
      const onError = jest.fn();
      board.on('task.created', () => {
        throw thrown;
      });
      board.onError(onError);
      const expressErrors = jest.fn();
      const app = appWith(expressLib, board);
      app.use((err: unknown, _req: unknown, res: { status(n: number): { end(): void } }, _next: unknown) => {
        expressErrors(err);
        res.status(599).end();
      });
      const unhandled = watchUnhandled();
      try {
        const res = await post(app, PATH, signBoard(fixture('board', 'task.created')));
        expect(res.status).toBe(500);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body).toEqual({ ok: false, code: 'handler_failed', message: 'a handler failed' });
        await tick();
        expect(expressErrors).not.toHaveBeenCalled();
        expect(onError).toHaveBeenCalledTimes(1);
        expect(onError.mock.calls[0][0].code).toBe('handler_failed');
        const line = memory.lines.find((l) => l.code === 'handler_failed' && l.outcome === 'rejected');
        expect(line).toMatchObject({ level: 50, code: 'handler_failed', status: 500, err: { type: 'SvcWebhookError', code: 'handler_failed' } });
        expect(line!.err.message).toMatch(/^a handler failed: /);
        expect(unhandled.count()).toBe(0);
      } finally {
        unhandled.stop();
      }
    });

    it('rejecting with a hostile value asynchronously is the same: 500 handler_failed', async () => {
      const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger });
      board.on('task.created', async () => Promise.reject(hostileThrowables()[4]![1]));
      const res = await post(appWith(expressLib, board), PATH, signBoard(fixture('board', 'task.created')));
      expect(res.status).toBe(500);
      expect(res.body.code).toBe('handler_failed');
    });
  });

  describe('an onError or onDelivery listener that throws a hostile value', () => {
    it.each(hostileThrowables())('%s: the answer is unchanged, the failure logged, the process untouched', async (_what, thrown) => {
      const memory = memoryLogger();
      const { logger } = memory;
      const board = svcBoardWebhook({ secret: BOARD_SECRET, logger });
      board.on('task.created', () => {
        throw new Error('handler failure');
      });
      board.onError(() => {
        throw thrown;
      });
      board.onDelivery(async () => Promise.reject(thrown));
      const unhandled = watchUnhandled();
      try {
        const res = await post(appWith(expressLib, board), PATH, signBoard(fixture('board', 'task.created')));
        expect(res.status).toBe(500);
        expect(res.body.code).toBe('handler_failed');
        await sleep(5);
        expect(memory.lines.filter((l) => l.msg === 'an onError handler failed' || l.msg === 'an onDelivery listener failed')).toHaveLength(2);
        expect(unhandled.count()).toBe(0);
      } finally {
        unhandled.stop();
      }
    });
  });

  describe('a logger that throws', () => {
    it('decides nothing: the handled delivery is still 200 with the library JSON answer, never the Express error page', async () => {
      const { logger } = memoryLogger();
      // A logger whose info lines fail (a broken transport, a throwing serializer).
      const broken = Object.create(logger) as typeof logger;
      broken.child = ((...args: Parameters<typeof logger.child>) => {
        const child = logger.child(...args);
        child.info = () => {
          throw new Error('log sink broken');
        };
        return child;
      }) as typeof logger.child;
      const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: broken });
      const res = await post(appWith(expressLib, board), PATH, signBoard(fixture('board', 'task.created')));
      // The log line is lost, not the delivery: a 500 would have svc retry it, then disable the webhook.
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true });
    });
  });
});

describe('createNodeHandler with a handler that throws a hostile value', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it.each(hostileThrowables())('%s: 500 handler_failed as JSON', async (_what, thrown) => {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: memoryLogger().logger });
    board.on('task.created', () => {
      throw thrown;
    });
    server = createServer(createNodeHandler(board));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const res = await post(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, PATH, signBoard(fixture('board', 'task.created')));
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ ok: false, code: 'handler_failed', message: 'a handler failed' });
  });
});

describe('one delivery id spelled two ways', () => {
  function setup(options: Partial<BoardWebhookOptions> = {}) {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, ...options });
    return { board, app: appWith(expressLib5(), board) };
  }

  it('in lower and upper case at once runs the handlers once', async () => {
    const { board, app } = setup();
    const gate = deferred();
    const handler = jest.fn(() => gate.promise);
    board.on('task.created', handler);
    const event = fixture('board', 'task.created');
    const lower = post(app, PATH, signBoard({ ...event, id: event.id.toLowerCase() })).then((r) => r);
    await sleep(20);
    const upper = await post(app, PATH, signBoard({ ...event, id: event.id.toUpperCase() }));
    expect(upper.status).toBe(409);
    gate.resolve();
    expect((await lower).status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('a later upper-case repeat of a handled lower-case id is a duplicate', async () => {
    const { board, app } = setup();
    const handler = jest.fn();
    board.on('task.created', handler);
    const event = fixture('board', 'task.created');
    await post(app, PATH, signBoard({ ...event, id: event.id.toLowerCase() })).expect(200, { ok: true });
    await post(app, PATH, signBoard({ ...event, id: event.id.toUpperCase() })).expect(200, { ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('reaches handlers, the store, the log and onDelivery in the canonical lower-case form', async () => {
    const memory = memoryLogger();
    const { logger } = memory;
    const claimed: string[] = [];
    const store = memoryStore();
    const spyStore: DeliveryStore = {
      claim: (id, lease) => (claimed.push(id), store.claim(id, lease)),
      commit: (id, token) => (claimed.push(id), store.commit(id, token)),
      release: (id, token) => store.release(id, token),
    };
    const { board, app } = setup({ logger, store: spyStore });
    const ids: string[] = [];
    const records: string[] = [];
    board.on('task.created', (_e, ctx) => void ids.push(ctx.deliveryId));
    board.onDelivery((r) => void records.push(r.deliveryId!));
    const event = fixture('board', 'task.created');
    const upper = event.id.toUpperCase();
    // The header may spell it either way: compared in the canonical form.
    await post(app, PATH, signBoard({ ...event, id: upper }), { 'X-Svc-Delivery': event.id.toLowerCase() }).expect(200);
    await tick();
    const canonical = event.id.toLowerCase();
    expect(ids).toEqual([canonical]);
    expect(claimed).toEqual([canonical, canonical]);
    expect(records).toEqual([canonical]);
    expect(memory.lines.find((l) => l.msg === 'delivery received')?.deliveryId).toBe(canonical);
  });

  it('a header naming another id is still refused 400 delivery_id_mismatch', async () => {
    const { app } = setup();
    const event = fixture('board', 'task.created');
    const res = await post(app, PATH, signBoard(event), { 'X-Svc-Delivery': randomUUID() });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('delivery_id_mismatch');
  });

  it('applies to bot updates too', async () => {
    const bot = svcBotWebhook({ secret: 'bot-secret-for-tests-0123456789ab', logger: silentLogger });
    const handler = jest.fn();
    bot.on('messageCreate', handler);
    const app = appWith(expressLib5(), bot);
    const update = fixture('bot', 'messageCreate');
    await post(app, '/webhooks/bot', signBot({ ...update, id: update.id.toLowerCase() })).expect(200, { ok: true });
    await post(app, '/webhooks/bot', signBot({ ...update, id: update.id.toUpperCase() })).expect(200, { ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(handler.mock.calls[0][1].deliveryId).toBe(update.id.toLowerCase());
  });
});

describe('handler registration', () => {
  it('that is refused registers nothing', async () => {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger });
    const handler = jest.fn();
    expect(() => board.on(['task.created', 'task.bogus' as 'task.created'], handler)).toThrow(TypeError);
    await post(appWith(expressLib5(), board), PATH, signBoard(fixture('board', 'task.created'))).expect(200);
    expect(handler).not.toHaveBeenCalled();
  });

  it('names each type once however often the list repeats it', async () => {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger });
    const handler = jest.fn();
    board.on(['task.updated', 'task.created', 'task.updated'], handler);
    const app = appWith(expressLib5(), board);
    await post(app, PATH, signBoard(fixture('board', 'task.updated'))).expect(200);
    await post(app, PATH, signBoard(fixture('board', 'task.created'))).expect(200);
    expect(handler).toHaveBeenCalledTimes(2);
  });

  it('of a command list with a bad name registers none of it', async () => {
    const bot = svcBotWebhook({ secret: 'bot-secret-for-tests-0123456789ab', logger: silentLogger });
    const handler = jest.fn();
    expect(() => bot.command(['deploy', ''], handler)).toThrow(TypeError);
    const update = fixture('bot', 'messageCreate');
    update.event.messageCreate.message.command = { botUserId: update.botUserId, name: 'deploy', args: '' };
    await post(appWith(expressLib5(), bot), '/webhooks/bot', signBot(update)).expect(200);
    expect(handler).not.toHaveBeenCalled();
  });

  it('of an empty list is refused', () => {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger });
    expect(() => board.on([], jest.fn())).toThrow(TypeError);
  });
});

describe('a signed body that is not valid UTF-8', () => {
  it('is refused 400 invalid_utf8 and reaches no handler', async () => {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger });
    const handler = jest.fn();
    board.onAny(handler);
    const event = fixture('board', 'task.created', { task: { ...fixture('board', 'task.created').task, title: 'TITLE' } });
    const text = JSON.stringify(event);
    const at = text.indexOf('TITLE');
    const body = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xff, 0xfe]), Buffer.from(text.slice(at))]);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const server = createServer(appWith(expressLib5(), board));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${PATH}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Svc-Timestamp': timestamp, 'X-Svc-Signature': `v1=${hmacHex(BOARD_SECRET, timestamp, '.', body)}` },
        body,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('invalid_utf8');
    } finally {
      server.closeAllConnections();
      server.close();
    }
    expect(handler).not.toHaveBeenCalled();
  });
});

describe('a handler that never settles', () => {
  it('keeps its claim until `abandonAfter`, then the claim is released, the run logged as abandoned, and the retry runs the handlers', async () => {
    const memory = memoryLogger();
    const { logger } = memory;
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger, timeoutMs: 20, leaseMs: 40, abandonAfterMs: 1500 });
    let calls = 0;
    board.on('task.created', () => {
      calls++;
      if (calls === 1) return new Promise(() => undefined); // never settles
    });
    const app = appWith(expressLib5(), board);
    const event = fixture('board', 'task.created');
    const arrived = Date.now();
    await post(app, PATH, signBoard(event)).expect(503);
    await sleep(100); // more than two leases: only renewal keeps the claim
    expect((await post(app, PATH, signBoard(event))).status).toBe(409);
    const abandoned = () => memory.lines.some((l) => l.level === 50 && /abandon/.test(l.msg) && l.deliveryId === event.id);
    expect(abandoned()).toBe(false);
    while (!abandoned() && Date.now() - arrived < 5000) await sleep(20);
    expect(Date.now() - arrived).toBeGreaterThanOrEqual(1500);
    expect(abandoned()).toBe(true);
    await post(app, PATH, signBoard(event)).expect(200, { ok: true });
    expect(calls).toBe(2);
  });

  it('does not hold close() past `abandonAfter`', async () => {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, timeoutMs: 20, abandonAfterMs: 100 });
    board.on('task.created', () => new Promise(() => undefined));
    await post(appWith(expressLib5(), board), PATH, signBoard(fixture('board', 'task.created'))).expect(503);
    const started = Date.now();
    await board.close();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('an abandoned run that finishes later still records the delivery, so a later repeat is a duplicate', async () => {
    const memory = memoryLogger();
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: memory.logger, timeoutMs: 20, abandonAfterMs: 60 });
    const gate = deferred();
    const handler = jest.fn(() => gate.promise);
    board.on('task.created', handler);
    const app = appWith(expressLib5(), board);
    const event = fixture('board', 'task.created');
    await post(app, PATH, signBoard(event)).expect(503);
    const abandoned = () => memory.lines.some((l) => /abandoned and the claim released/.test(l.msg));
    for (let i = 0; i < 250 && !abandoned(); i++) await sleep(20);
    expect(abandoned()).toBe(true);
    gate.resolve();
    await sleep(10);
    await post(app, PATH, signBoard(event)).expect(200, { ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('refuses an `abandonAfter` not longer than `timeout`', () => {
    expect(() => svcBoardWebhook({ secret: BOARD_SECRET, timeoutMs: 1000, abandonAfterMs: 1000 })).toThrow(RangeError);
  });
});

describe('a store whose commit fails for a moment', () => {
  /** A memory store whose commits fail `failures` times first. */
  function blinkingStore(
    failures: number,
    fail: () => never = () => {
      throw new Error('store restarting');
    },
  ) {
    const inner = memoryStore();
    let left = failures;
    const commits = { attempts: 0 };
    const store: DeliveryStore = {
      claim: (id, lease) => inner.claim(id, lease),
      release: (id, token) => inner.release(id, token),
      commit: async (id, token) => {
        commits.attempts++;
        if (left-- > 0) fail();
        inner.commit(id, token);
      },
    };
    return { store, commits };
  }

  it('answers 200 at once and keeps committing until it holds, so a repeat is a duplicate', async () => {
    const { store, commits } = blinkingStore(3);
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, store });
    const handler = jest.fn();
    board.on('task.created', handler);
    const app = appWith(expressLib5(), board);
    const event = fixture('board', 'task.created');
    await post(app, PATH, signBoard(event)).expect(200, { ok: true });
    await board.close(); // waits for the commit's retries
    expect(commits.attempts).toBe(4);
    const again = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, store });
    await post(appWith(expressLib5(), again), PATH, signBoard(event)).expect(200, { ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('gives up when the lease would end, logging that a repeat would run again', async () => {
    const memory = memoryLogger();
    const { logger } = memory;
    const { store, commits } = blinkingStore(Number.POSITIVE_INFINITY, () => {
      throw hostileThrowables()[0]![1];
    });
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger, store, timeoutMs: 20, leaseMs: 300 });
    const event = fixture('board', 'task.created');
    await post(appWith(expressLib5(), board), PATH, signBoard(event)).expect(200);
    await board.close();
    expect(commits.attempts).toBeGreaterThan(2);
    const line = memory.lines.find((l) => /before its lease ended/.test(l.msg));
    expect(line).toMatchObject({ level: 50, deliveryId: event.id });
  });
});

function expressLib5() {
  return expressVersions[0]![1];
}
