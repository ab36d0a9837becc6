import { createFakeSvc, FakeSvcError, type FakeSvc, type FakeSvcOptions } from '../../src/testing';
import { BOARD_SECRET, startReceiver } from './receiver';

describe('createFakeSvc options', () => {
  it.each<[string, FakeSvcOptions]>([
    ['a port out of range', { port: 70_000 }],
    ['an unknown clock', { clock: 'fast' as never }],
    ['allowLoopback that is not a boolean', { allowLoopback: 'yes' as never }],
    ['a duplicate rate over 1', { chaos: { duplicateRate: 1.5 } }],
    ['a reorder window of 0', { chaos: { reorderWindow: 0 } }],
    ['a forward target that is no URL', { forward: { 'https://hooks.example.com': 'nowhere' } }],
    ['an empty allowed host', { allowedHosts: [''] }],
    ['startAt on the real clock', { startAt: 0 }],
    ['a negative apiDelayMs', { apiDelayMs: -1 }],
    ['an empty host', { host: '' }],
    ['a misspelt option', { allowLoopBack: true } as never],
    ['an apiRateLimit of 0 per second', { apiRateLimit: { perSecond: 0, retryAfterSeconds: 1 } }],
  ])('should refuse %s with invalid_option before listening', async (_what, options) => {
    await expect(createFakeSvc(options)).rejects.toMatchObject({ name: 'FakeSvcError', code: 'invalid_option' });
  });

  it('should name the option it refuses, and the closest known one for a misspelling', async () => {
    await expect(createFakeSvc({ allowLoopBack: true } as never)).rejects.toThrow(/allowLoopBack.*allowLoopback/);
  });

  it('should start the manual clock at startAt', async () => {
    const svc = await createFakeSvc({ clock: 'manual', startAt: 1_000_000 });
    try {
      await svc.advance(500);
      expect(svc.now()).toBe(1_000_500);
    } finally {
      await svc.close();
    }
  });

  it('should answer beyond apiRateLimit with 429 and Retry-After, and delay answers by apiDelayMs', async () => {
    const svc = await createFakeSvc({ apiRateLimit: { perSecond: 2, retryAfterSeconds: 3 }, apiDelayMs: 50 });
    try {
      const started = Date.now();
      const answers = await Promise.all([1, 2, 3].map(() => fetch(`${svc.baseUrl}/api/version`)));
      expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 429]);
      expect(answers.find((r) => r.status === 429)!.headers.get('retry-after')).toBe('3');
      expect(Date.now() - started).toBeGreaterThanOrEqual(45);
      const [first] = svc.requests();
      expect(first!.answeredAt! - first!.receivedAt).toBeGreaterThanOrEqual(45);
    } finally {
      await svc.close();
    }
  });

  it('should listen on 127.0.0.1 by default', async () => {
    const svc = await createFakeSvc();
    try {
      expect(svc.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await svc.close();
    }
  });

  it('should refuse advance() on the real clock with clock_not_manual, and any call once closed', async () => {
    const svc = await createFakeSvc();
    await expect(svc.advance(1)).rejects.toMatchObject({ code: 'clock_not_manual' });
    await svc.close();
    expect(() => svc.emitBoardEvent({ type: 'task.created' })).toThrow(FakeSvcError);
  });

  it("should type a board event's overrides by its type", async () => {
    const svc = await createFakeSvc({ clock: 'manual' });
    try {
      expect(svc.emitBoardEvent({ type: 'task.created', overrides: { task: { title: 'Typed' } } }).sequence).toBe(1);
      // @ts-expect-error a task title is a string
      svc.emitBoardEvent({ type: 'task.created', overrides: { task: { title: 42 } } });
      // @ts-expect-error `comment` is null on a task.created event, not an object
      svc.emitBoardEvent({ type: 'task.created', overrides: { comment: { text: 'x' } } });
    } finally {
      await svc.close();
    }
  });

  it('should refuse an unknown event type or board with a FakeSvcError', async () => {
    const svc = await createFakeSvc({ clock: 'manual' });
    try {
      expect(() => svc.emitBoardEvent({ type: 'task.exploded' as never })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
      expect(() => svc.emitBoardEvent({ type: 'ping' as never })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
      expect(() => svc.emitBoardEvent({ type: 'task.created', boardId: 'nope' })).toThrow(expect.objectContaining({ code: 'not_found' }));
      await expect(svc.advance(-1)).rejects.toMatchObject({ code: 'invalid_input' });
    } finally {
      await svc.close();
    }
  });
});

describe('the control routes', () => {
  let svc: FakeSvc;
  const post = async (path: string, body: unknown = {}, method = 'POST') => {
    const res = await fetch(`${svc.baseUrl}/_emulator${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeEach(async () => {
    svc = await createFakeSvc({ clock: 'manual', allowLoopback: true });
  });
  afterEach(() => svc.close());

  it('should make a board with a token that manages it, emit its events and show the audit', async () => {
    const receiver = await startReceiver();
    try {
      const made = await post('/boards', { key: 'OPS' });
      expect(made.status).toBe(201);
      expect(made.body.board).toMatchObject({ key: 'OPS', plan: 'business' });
      const put = await fetch(`${svc.baseUrl}/api/boards/${made.body.board.id}/webhook`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${made.body.personToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.boardUrl, secret: BOARD_SECRET }),
      });
      expect(put.status).toBe(200);
      const emitted = await post(`/boards/${made.body.board.id}/events`, { type: 'task.created', overrides: { task: { title: 'From the control route' } } });
      expect(emitted).toEqual({ status: 201, body: { id: expect.any(String), sequence: 1, queued: true } });
      expect((await post('/advance', { ms: 0 })).status).toBe(200);
      expect(receiver.boardEvents).toEqual([
        expect.objectContaining({
          id: emitted.body.id,
          task: expect.objectContaining({ title: 'From the control route', key: expect.stringMatching(/^OPS-\d+$/) }),
        }),
      ]);
      const audit = (await fetch(`${svc.baseUrl}/_emulator/audit`).then((r) => r.json())) as { deliveries: unknown[] };
      expect(audit.deliveries).toEqual([expect.objectContaining({ id: emitted.body.id, status: 'delivered' })]);
    } finally {
      await receiver.close();
    }
  });

  it('should make a bot whose token the bot routes accept', async () => {
    const bot = await post('/bots');
    expect(bot.body.token).toMatch(new RegExp(`^svc_bot_${bot.body.id}_[A-Za-z0-9_-]{43}$`));
    const get = await fetch(`${svc.baseUrl}/api/bots/me/webhook`, { headers: { authorization: `Bearer ${bot.body.token}` } });
    expect(get.status).toBe(404);
  });

  it('should pause a board by its plan', async () => {
    expect((await post(`/boards/${svc.board.id}/plan`, { plan: 'free' }, 'PUT')).status).toBe(200);
    expect(svc.boards()[0]!.plan).toBe('free');
    expect((await post(`/boards/${svc.board.id}/plan`, { plan: 'gold' }, 'PUT')).body.code).toBe('invalid_input');
  });

  it('should answer 400 to a bad event, 404 to an unknown board or route', async () => {
    expect((await post(`/boards/${svc.board.id}/events`, { type: 'nope' })).status).toBe(400);
    expect((await post(`/boards/${svc.board.id}/events`, JSON.parse('{"type":"task.created","overrides":{"__proto__":{"x":1}}}'))).status).toBe(400);
    expect((await post('/boards/nope/events', { type: 'task.created' })).status).toBe(404);
    expect((await post('/nothing')).status).toBe(404);
  });

  it('should list boards, bots and the clock', async () => {
    const state = await fetch(`${svc.baseUrl}/_emulator`).then((r) => r.json());
    expect(state).toMatchObject({ clock: 'manual', boards: [expect.objectContaining({ id: svc.board.id })], bots: [svc.bot.id] });
    expect(JSON.stringify(state)).not.toContain(svc.bot.token);
    expect(JSON.stringify(state)).not.toContain(svc.person.token);
  });
});
