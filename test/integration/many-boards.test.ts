import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { createNodeHandler, svcBoardWebhook, svcBotWebhook, type BoardWebhookOptions } from '../../src';
import { mac } from '../../src/verify/mac';
import { deferred, expressVersions, memoryLogger, silentLogger } from '../support/apps';
import { post } from '../support/post';
import { fixture, signBoard, signBot, onBoard } from '../support/sign';

const PATH = '/webhooks/board';
const A = randomUUID();
const B = randomUUID();
const SECRET_A = 'secret-of-board-a-0123456789abcdef';
const SECRET_B = 'secret-of-board-b-0123456789abcdef';

function eventFor(boardId: string, type = 'task.created') {
  return onBoard(fixture('board', type), boardId);
}

/** A resolver over a table that a test can change while the receiver runs; it counts its calls. */
function table(initial: Record<string, string | string[]>) {
  const secrets = new Map<string, string | string[]>(Object.entries(initial));
  const calls: string[] = [];
  const resolver = ({ boardId }: { boardId: string }) => {
    calls.push(boardId);
    return secrets.get(boardId);
  };
  return { secrets, calls, resolver };
}

describe.each(expressVersions)('many boards on one receiver, in %s', (_name, expressLib) => {
  function setup(options: Partial<BoardWebhookOptions> & Pick<BoardWebhookOptions, 'secret'>) {
    const handled: Array<{ board: string; id: string }> = [];
    const board = svcBoardWebhook({ logger: silentLogger, ...options }).onAny((event) => void handled.push({ board: event.board?.id, id: event.id }));
    const app = expressLib();
    app.use(board);
    return { board, app, handled };
  }

  it('accepts each board with its own secret', async () => {
    const t = table({ [A]: SECRET_A, [B]: SECRET_B });
    const { app, handled } = setup({ secret: t.resolver });
    const a = eventFor(A);
    const b = eventFor(B);
    await post(app, PATH, signBoard(a, { secret: SECRET_A })).expect(200);
    await post(app, PATH, signBoard(b, { secret: SECRET_B })).expect(200);
    expect(handled).toEqual([
      { board: A, id: a.id },
      { board: B, id: b.id },
    ]);
  });

  it("gives handlers the verified board as ctx.boardId, and refuses an event of board A about board B's task (401 board_reference_mismatch)", async () => {
    const t = table({ [A]: SECRET_A, [B]: SECRET_B });
    const verified: string[] = [];
    const board = svcBoardWebhook({ secret: t.resolver, logger: silentLogger, schemaPolicy: 'warn' }).onAny((_e, ctx) => void verified.push(ctx.boardId));
    const app = expressLib().use(board);
    await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_A })).expect(200);
    // Board A's admin holds A's secret and signs events naming B's task, key or workspace.
    const aboutB = [
      (e: any) => ({ ...e, task: { ...e.task, board_id: B } }),
      (e: any) => ({ ...e, task: { ...e.task, key: 'OPS-7' } }),
      (e: any) => ({ ...e, task: { ...e.task, workspace_id: randomUUID() } }),
    ];
    for (const forge of aboutB) {
      const res = await post(app, PATH, signBoard(forge(eventFor(A)), { secret: SECRET_A }));
      expect([res.status, res.body.code]).toEqual([401, 'board_reference_mismatch']);
    }
    expect(verified).toEqual([A]);
  });

  it("when an event claims board A but is signed with board B's secret -> 401 signature_mismatch, handler not called", async () => {
    const t = table({ [A]: SECRET_A, [B]: SECRET_B });
    const { app, handled } = setup({ secret: t.resolver });
    const res = await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_B }));
    expect([res.status, res.body.code]).toEqual([401, 'signature_mismatch']);
    expect(handled).toEqual([]);
  });

  it('when the board is unknown -> 401 unknown_board, and no HMAC is computed', async () => {
    const t = table({ [A]: SECRET_A });
    const { app, handled } = setup({ secret: t.resolver });
    const hmac = jest.spyOn(mac(), 'signedByAny');
    try {
      const res = await post(app, PATH, signBoard(eventFor(B), { secret: SECRET_A }));
      expect([res.status, res.body.code]).toEqual([401, 'unknown_board']);
      expect(hmac).not.toHaveBeenCalled();
    } finally {
      hmac.mockRestore();
    }
    expect(handled).toEqual([]);
  });

  it('when the body names no board -> 401 board_id_missing; when it is not JSON, likewise', async () => {
    const t = table({ [A]: SECRET_A });
    const { app } = setup({ secret: t.resolver });
    const event = eventFor(A);
    delete event.board;
    const res = await post(app, PATH, signBoard(event, { secret: SECRET_A }));
    expect([res.status, res.body.code]).toEqual([401, 'board_id_missing']);
    const notJson = await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_A, body: '{"board":' }));
    expect([notJson.status, notJson.body.code]).toEqual([401, 'board_id_missing']);
    expect(t.calls).toEqual([]);
  });

  describe('when the body names other boards besides its own (crafted bodies)', () => {
    function nestedFirst(event: Record<string, any>, earlier: string): string {
      const { id, type, ...rest } = event;
      return JSON.stringify({ id, type, extra: { board: { id: earlier } }, note: '\\"board":{"id":"x"}', ...rest });
    }

    it("a board nested before the event's own is not taken for it: its own board's secret verifies it", async () => {
      const t = table({ [A]: SECRET_A, [B]: SECRET_B });
      const { app, handled } = setup({ secret: t.resolver, schemaPolicy: 'skip' });
      const event = eventFor(A);
      await post(app, PATH, signBoard(event, { secret: SECRET_A, body: nestedFirst(event, B) })).expect(200);
      const res = await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_B, body: nestedFirst(eventFor(A), B) }));
      expect([res.status, res.body.code]).toEqual([401, 'signature_mismatch']);
      expect(handled.map((h) => h.board)).toEqual([A]);
      expect(t.calls).toEqual([A]);
    });

    it('a body naming `board` twice at the top, signed for the first -> 401 board_id_mismatch, handler not called', async () => {
      const t = table({ [A]: SECRET_A, [B]: SECRET_B });
      const { app, handled } = setup({ secret: t.resolver, schemaPolicy: 'skip' });
      const event = eventFor(B);
      const body = JSON.stringify(event).replace('"board":{', `"board":{"id":"${A}"},"board":{`);
      const res = await post(app, PATH, signBoard(event, { secret: SECRET_A, body }));
      expect([res.status, res.body.code]).toEqual([401, 'board_id_mismatch']);
      expect(handled).toEqual([]);
    });

    it('a board further than the first 4 KB is read by parsing the body', async () => {
      const t = table({ [A]: SECRET_A });
      const { app, handled } = setup({ secret: t.resolver, schemaPolicy: 'skip' });
      const event = eventFor(A);
      const { board, ...rest } = event;
      const body = JSON.stringify({ ...rest, padding: 'x'.repeat(5_000), board });
      await post(app, PATH, signBoard(event, { secret: SECRET_A, body })).expect(200);
      expect(handled.map((h) => h.board)).toEqual([A]);
    });
  });

  it("rotates one board's secret: both of its secrets verify it, never another board's", async () => {
    const NEW_A = 'new-secret-of-board-a-0123456789';
    const t = table({ [A]: [SECRET_A, NEW_A], [B]: SECRET_B });
    const { app } = setup({ secret: t.resolver });
    await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_A })).expect(200);
    await post(app, PATH, signBoard(eventFor(A), { secret: NEW_A })).expect(200);
    const res = await post(app, PATH, signBoard(eventFor(B), { secret: NEW_A }));
    expect([res.status, res.body.code]).toEqual([401, 'signature_mismatch']);
  });

  it("accepts a board added after start on the sender's retry, without a restart", async () => {
    let now = Date.now();
    const t = table({ [A]: SECRET_A });
    const { app, handled } = setup({ secret: t.resolver, now: () => now });
    const late = eventFor(B);
    const first = await post(app, PATH, signBoard(late, { secret: SECRET_B, timestamp: Math.floor(now / 1000) }));
    expect(first.body.code).toBe('unknown_board');
    t.secrets.set(B, SECRET_B); // the board is connected now
    now += 60_000; // svc retries after a minute; unknown boards are remembered for 10 s
    await post(app, PATH, signBoard(late, { secret: SECRET_B, timestamp: Math.floor(now / 1000) })).expect(200);
    expect(handled.map((h) => h.id)).toEqual([late.id]);
  });

  it('picks up a rotation within the cache time, and at once after forgetSecret()', async () => {
    let now = Date.now();
    const NEW_A = 'rotated-secret-of-board-a-012345';
    const t = table({ [A]: SECRET_A });
    const { app, board } = setup({ secret: t.resolver, now: () => now, secretLookup: { ttlMs: 30_000 } });
    const ts = () => Math.floor(now / 1000);
    await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_A, timestamp: ts() })).expect(200);
    t.secrets.set(A, NEW_A);
    // Still cached: the old secret works, the new one not yet.
    expect((await post(app, PATH, signBoard(eventFor(A), { secret: NEW_A, timestamp: ts() }))).body.code).toBe('signature_mismatch');
    now += 30_001;
    await post(app, PATH, signBoard(eventFor(A), { secret: NEW_A, timestamp: ts() })).expect(200);
    // A disconnect, made known at once.
    t.secrets.delete(A);
    board.forgetSecret(A);
    expect((await post(app, PATH, signBoard(eventFor(A), { secret: NEW_A, timestamp: ts() }))).body.code).toBe('unknown_board');
  });

  it('keeps at most `max` known boards: the oldest answer is asked for again', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const t = table(Object.fromEntries(ids.map((id) => [id, SECRET_A])));
    const { app } = setup({ secret: t.resolver, secretLookup: { maxIds: 2 } });
    for (const id of [...ids, ids[2]!, ids[0]!]) await post(app, PATH, signBoard(eventFor(id), { secret: SECRET_A })).expect(200);
    expect(t.calls).toEqual([...ids, ids[0]]);
  });

  it('when the resolver throws -> 503 secret_unavailable, logged at error without the secret; accepted once it recovers', async () => {
    const log = memoryLogger();
    let failing = true;
    const board = svcBoardWebhook({
      logger: log.logger,
      secret: ({ boardId }) => {
        if (failing) throw new Error('vault unreachable');
        return boardId === A ? SECRET_A : undefined;
      },
      secretLookup: { failureTtlMs: 100 },
    });
    const app = expressLib().use(board);
    const event = eventFor(A);
    const res = await post(app, PATH, signBoard(event, { secret: SECRET_A }));
    expect([res.status, res.body.code]).toEqual([503, 'secret_unavailable']);
    expect(res.headers['retry-after']).toBeDefined();
    const errors = log.lines.filter((l) => l.level === 50);
    expect(errors.some((l) => l.code === 'secret_unavailable' && l.boardId === A)).toBe(true);
    failing = false;
    // The failure is remembered for failureTtlMs, then the board is asked about again.
    await new Promise((r) => setTimeout(r, 150));
    await post(app, PATH, signBoard(event, { secret: SECRET_A })).expect(200);
    expect(log.text()).not.toContain(SECRET_A);
  });

  it("drops the verifying board's secret from its own line about a handler's failure and from the handlers' lines, even once the board is forgotten", async () => {
    const log = memoryLogger();
    const board = svcBoardWebhook({ logger: log.logger, secret: table({ [A]: SECRET_A }).resolver })
      .on('task.updated', () => {
        board.forgetSecret(A); // a rotation while the handler runs, before it fails
        throw new Error(`re-signing failed with ${SECRET_A}`);
      })
      .on('task.archived', (_event, ctx) => {
        board.forgetSecret(A); // a rotation while the handler runs
        ctx.log.info({ note: `old secret ${SECRET_A}` }, 'after a rotation');
      });
    const app = expressLib().use(board);
    const failed = await post(app, PATH, signBoard(eventFor(A, 'task.updated'), { secret: SECRET_A }));
    expect([failed.status, failed.body.code]).toEqual([500, 'handler_failed']);
    await post(app, PATH, signBoard(eventFor(A, 'task.archived'), { secret: SECRET_A })).expect(200);
    const refused = log.lines.find((l) => l.code === 'handler_failed' && l.outcome === 'rejected');
    expect(JSON.stringify(refused)).toContain('re-signing failed with [Redacted]');
    expect(log.lines.find((l) => l.msg === 'after a rotation')).toMatchObject({ note: 'old secret [Redacted]' });
    expect(log.text()).not.toContain(SECRET_A);
  });

  describe('when a delivery claims a board that is no board id (hostile ids)', () => {
    const HOSTILE = ['constructor', '__proto__', 'toString', A.toUpperCase(), A.replace(/-/g, ''), "' OR '1'='1", `${A}' --`];

    it('a resolver over a plain object is never asked for `constructor` and the like -> 401 unknown_board, no error line', async () => {
      const log = memoryLogger();
      const asked: string[] = [];
      const secrets: Record<string, string> = { [A]: SECRET_A };
      const board = svcBoardWebhook({ logger: log.logger, secret: ({ boardId }) => (asked.push(boardId), secrets[boardId]) });
      const app = expressLib().use(board);
      for (const id of HOSTILE) {
        const res = await post(app, PATH, signBoard(eventFor(id), { secret: SECRET_A }));
        expect([id, res.status, res.body.code]).toEqual([id, 401, 'unknown_board']);
      }
      await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_A })).expect(200);
      expect(asked).toEqual([A]);
      expect(log.lines.filter((l) => l.level >= 50)).toEqual([]);
    });

    it('a resolver over a uuid column (which throws on anything else) is never asked either -> 401, not 503', async () => {
      const log = memoryLogger();
      const asked: string[] = [];
      // As PostgreSQL answers a query on a uuid column with text that is no UUID.
      const uuidColumn = ({ boardId }: { boardId: string }) => {
        asked.push(boardId);
        if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(boardId))
          throw new Error(`invalid input syntax for type uuid: "${boardId}"`);
        return boardId.toLowerCase() === A ? SECRET_A : undefined;
      };
      const board = svcBoardWebhook({ logger: log.logger, secret: uuidColumn, path: '/webhooks/boards/:boardId', schemaPolicy: 'skip' });
      const app = expressLib().use(board);
      for (const id of HOSTILE) {
        const inBody = await post(app, `/webhooks/boards/${A}`, signBoard(eventFor(id), { secret: SECRET_A }));
        expect([id, inBody.status]).toEqual([id, 401]);
        const bare = eventFor(A);
        delete bare.board;
        const inPath = await post(app, `/webhooks/boards/${encodeURIComponent(id)}`, signBoard(bare, { secret: SECRET_A }));
        expect([id, inPath.status, inPath.body.code]).toEqual([id, 401, 'unknown_board']);
      }
      expect(asked).toEqual([]);
      expect(log.lines.filter((l) => l.level >= 50)).toEqual([]);
    });
  });

  it('when the resolver fails under a flood for one board: one lookup per failureTtlMs, one failure line per minute', async () => {
    const log = memoryLogger();
    const asked: string[] = [];
    const board = svcBoardWebhook({
      logger: log.logger,
      secret: ({ boardId }) => {
        asked.push(boardId);
        throw new Error('vault unreachable');
      },
    });
    const app = expressLib().use(board);
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await post(app, PATH, signBoard(eventFor(A), { secret: 'forged-secret-0123456789abcdef' }))).status);
    expect(new Set(statuses)).toEqual(new Set([503]));
    expect(asked).toEqual([A]);
    expect(log.lines.filter((l) => l.msg?.startsWith('the secret resolver'))).toHaveLength(1);
  });

  it('when the resolver fails and forged requests each claim a fresh board: at most ten lookup lines a minute and one refusal line', async () => {
    const log = memoryLogger();
    const board = svcBoardWebhook({
      logger: log.logger,
      secret: () => {
        throw new Error('vault unreachable');
      },
    });
    const app = expressLib().use(board);
    for (let i = 0; i < 30; i++) await post(app, PATH, signBoard(eventFor(randomUUID()), { secret: 'forged-secret-0123456789abcdef' })).expect(503);
    expect(log.lines.filter((l) => l.msg?.startsWith('the secret resolver'))).toHaveLength(10);
    const refusals = log.lines.filter((l) => l.code === 'secret_unavailable' && l.msg?.startsWith('delivery refused'));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!.level).toBe(40);
  });

  it('when the resolver answers something that is not a secret -> 503 secret_unavailable', async () => {
    const { app } = setup({ secret: () => 'short' });
    const res = await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_A }));
    expect([res.status, res.body.code]).toEqual([503, 'secret_unavailable']);
  });

  it("when the resolver hangs -> 503 secret_unavailable within the sender's 10 s (default timeout), then accepted once it answers again", async () => {
    let hang = true;
    const { app } = setup({
      secret: ({ boardId }) => (hang ? new Promise<string>(() => undefined) : boardId === A ? SECRET_A : undefined),
      secretLookup: { failureTtlMs: 0 },
    });
    const started = Date.now();
    const res = await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_A }));
    expect([res.status, res.body.code]).toEqual([503, 'secret_unavailable']);
    expect(Date.now() - started).toBeLessThan(10_000);
    hang = false;
    await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_A })).expect(200);
  }, 15_000);

  describe('with the board in the path (`/webhooks/boards/:boardId`)', () => {
    const pathOf = (id: string) => `/webhooks/boards/${id}`;

    it('accepts each board at its own path, and refuses a path and body that disagree -> 401 board_id_mismatch', async () => {
      const t = table({ [A]: SECRET_A, [B]: SECRET_B });
      const { app, handled } = setup({ secret: t.resolver, path: '/webhooks/boards/:boardId' });
      const a = eventFor(A);
      await post(app, pathOf(A), signBoard(a, { secret: SECRET_A })).expect(200);
      const res = await post(app, pathOf(B), signBoard(eventFor(A), { secret: SECRET_B }));
      expect([res.status, res.body.code]).toEqual([401, 'board_id_mismatch']);
      expect(handled.map((h) => h.id)).toEqual([a.id]);
    });

    it('takes the board from the path when the body names none', async () => {
      const t = table({ [A]: SECRET_A });
      const { app } = setup({ secret: t.resolver, path: '/webhooks/boards/:boardId', schemaPolicy: 'skip' });
      const event = eventFor(A);
      delete event.board;
      await post(app, pathOf(A), signBoard(event, { secret: SECRET_A })).expect(200);
      expect(t.calls).toEqual([A]);
    });

    it('as a route handler, reads the route parameter Express parsed', async () => {
      const t = table({ [A]: SECRET_A });
      const board = svcBoardWebhook({ secret: t.resolver, logger: silentLogger, path: '/webhooks/boards/:boardId' });
      const app = expressLib();
      app.post('/hooks/:boardId', board);
      await post(app, `/hooks/${A}`, signBoard(eventFor(A), { secret: SECRET_A })).expect(200);
      const res = await post(app, `/hooks/${B}`, signBoard(eventFor(A), { secret: SECRET_A }));
      expect([res.status, res.body.code]).toEqual([401, 'board_id_mismatch']);
    });
  });

  it('refuses a path parameter without a resolver, and a bot resolver without one path per bot, at setup', () => {
    expect(() => svcBoardWebhook({ secret: SECRET_A, path: '/webhooks/boards/:boardId' })).toThrow(TypeError);
    expect(() => svcBotWebhook({ secret: () => SECRET_A })).toThrow(TypeError);
    expect(() => svcBoardWebhook({ secret: () => SECRET_A, path: '/webhooks/:board' })).toThrow(TypeError);
    expect(() => svcBoardWebhook({ secret: () => SECRET_A, secretLookup: { ttlMs: -1 } })).toThrow(RangeError);
  });

  it('hosts several bots, one path per bot, each with its own secret', async () => {
    const BOT_1 = 'bot-one-secret-0123456789abcdef';
    const BOT_2 = 'bot-two-secret-0123456789abcdef';
    // Bots are named in the path by their user id, the `botUserId` of their updates.
    const ONE = '11111111-1111-4111-8111-111111111111';
    const TWO = '22222222-2222-4222-8222-222222222222';
    const seen: string[] = [];
    const bot = svcBotWebhook({ secret: ({ botId }) => ({ [ONE]: BOT_1, [TWO]: BOT_2 })[botId], path: '/webhooks/bots/:botId', logger: silentLogger }).onAny(
      (_d, ctx) => void seen.push(ctx.req!.url!),
    );
    const app = expressLib().use(bot);
    await post(app, `/webhooks/bots/${ONE}`, signBot(fixture('bot', 'messageCreate', { botUserId: ONE }), { secret: BOT_1 })).expect(200);
    await post(app, `/webhooks/bots/${TWO}`, signBot(fixture('bot', 'messageCreate', { botUserId: TWO }), { secret: BOT_2 })).expect(200);
    const crossed = await post(app, `/webhooks/bots/${ONE}`, signBot(fixture('bot', 'messageCreate', { botUserId: ONE }), { secret: BOT_2 }));
    expect([crossed.status, crossed.body.code]).toEqual([401, 'signature_mismatch']);
    const unknown = await post(app, '/webhooks/bots/three', signBot(fixture('bot', 'messageCreate'), { secret: BOT_1 }));
    expect([unknown.status, unknown.body.code]).toEqual([401, 'unknown_bot']);
    // Bot one's secret signs an update for bot two: the path's bot verified it, so it is refused.
    const otherBot = await post(app, `/webhooks/bots/${ONE}`, signBot(fixture('bot', 'messageCreate', { botUserId: TWO }), { secret: BOT_1 }));
    expect([otherBot.status, otherBot.body.code]).toEqual([401, 'bot_id_mismatch']);
    expect(seen).toEqual([`/webhooks/bots/${ONE}`, `/webhooks/bots/${TWO}`]);
  });

  it('inside Express, another method on the webhook path still passes on to the next route', async () => {
    const board = svcBoardWebhook({ secret: SECRET_A, logger: silentLogger });
    const app = expressLib();
    app.use(board);
    app.get(PATH, (_req, res) => void res.send('status page'));
    const res = await request(app).get(PATH);
    expect([res.status, res.text]).toEqual([200, 'status page']);
  });
});

describe('lookups under load (one node:http server)', () => {
  let server: Server;
  let base: string;
  const started: string[] = [];
  const gate = deferred();
  const secrets = new Map<string, string>([[A, SECRET_A]]);
  const board = svcBoardWebhook({
    logger: silentLogger,
    secret: async ({ boardId }) => {
      started.push(boardId);
      await gate.promise;
      return secrets.get(boardId);
    },
  });

  beforeAll(async () => {
    server = createServer(createNodeHandler(board));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function send(event: Record<string, unknown>, secret: string): Promise<Response> {
    const signed = signBoard(event, { secret });
    return fetch(`${base}${PATH}`, { method: 'POST', headers: signed.headers, body: signed.body });
  }

  it('100 concurrent deliveries for a new board cause at most 2 lookups; 100 forged ones for an unknown board likewise', async () => {
    const unknownBoard = randomUUID();
    const real = Array.from({ length: 100 }, () => send(eventFor(A), SECRET_A));
    const forged = Array.from({ length: 100 }, () => send(eventFor(unknownBoard), SECRET_A));
    await new Promise((r) => setTimeout(r, 300));
    gate.resolve();
    const answers = await Promise.all([...real, ...forged]);
    const statuses = await Promise.all(answers.map(async (r) => `${r.status} ${((await r.json()) as { code?: string }).code ?? ''}`));
    expect(statuses.slice(0, 100).every((s) => s === '200 ')).toBe(true);
    expect(statuses.slice(100).every((s) => s === '401 unknown_board')).toBe(true);
    expect(started.filter((id) => id === A).length).toBeLessThanOrEqual(2);
    expect(started.filter((id) => id === unknownBoard).length).toBeLessThanOrEqual(2);
  });

  it('another method on the webhook path -> 405 with Allow: POST; another path -> 404', async () => {
    const res = await fetch(`${base}${PATH}`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(((await res.json()) as { code: string }).code).toBe('method_not_allowed');
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
  });
});

describe('refusals in the log', () => {
  it('an expected refusal is one warn line without a stack, with the unverified claims and the peer', async () => {
    const log = memoryLogger();
    const board = svcBoardWebhook({ secret: SECRET_A, logger: log.logger });
    const app = express().use(board);
    const event = eventFor(B);
    await post(app, PATH, signBoard(event, { secret: SECRET_B })).expect(401);
    const lines = log.lines.filter((l) => l.outcome === 'rejected');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      code: 'signature_mismatch',
      status: 401,
      unverified: { deliveryId: event.id, event: 'task.created', boardId: B },
    });
    expect(typeof lines[0]!.peer).toBe('string');
    expect(lines[0]!.err).toBeUndefined();
    expect(log.text()).not.toContain('    at ');
  });

  it('a flood of refusals is one line per code per interval, with a count of the rest', async () => {
    const log = memoryLogger();
    let now = Date.now();
    const board = svcBoardWebhook({ secret: SECRET_A, logger: log.logger, now: () => now });
    const app = express().use(board);
    for (let i = 0; i < 20; i++) await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_B, timestamp: Math.floor(now / 1000) })).expect(401);
    await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_A, timestamp: 1 })).expect(401);
    expect(log.lines.filter((l) => l.outcome === 'rejected').map((l) => l.code)).toEqual(['signature_mismatch', 'timestamp_out_of_tolerance']);
    now += 10_001;
    await post(app, PATH, signBoard(eventFor(A), { secret: SECRET_B, timestamp: Math.floor(now / 1000) })).expect(401);
    const last = log.lines.filter((l) => l.outcome === 'rejected').at(-1)!;
    expect(last).toMatchObject({ code: 'signature_mismatch', repeated: 19 });
  });
});
