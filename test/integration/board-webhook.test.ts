import express5 from 'express';
import { svcBoardWebhook, type BoardWebhookMiddleware, type BoardWebhookOptions } from '../../src';
import { appWith, deferred, expressVersions, silentLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, fixture, hmacHex, signBoard } from '../support/sign';

const PATH = '/webhooks/board';

describe.each(expressVersions)('board webhook in %s', (_name, expressLib) => {
  function setup(options: Partial<BoardWebhookOptions> = {}): { board: BoardWebhookMiddleware; app: express5.Express } {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, ...options });
    return { board, app: appWith(expressLib, board) };
  }

  describe('a valid delivery', () => {
    it('is answered 200 and runs each matching handler once, with the typed event and context', async () => {
      const { board, app } = setup();
      const created = jest.fn();
      const any = jest.fn();
      const other = jest.fn();
      board.on('task.created', created).on('task.updated', other).onAny(any);
      const event = fixture('board', 'task.created');
      const signed = signBoard(event);

      const res = await post(app, PATH, signed);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true });
      expect(created).toHaveBeenCalledTimes(1);
      expect(any).toHaveBeenCalledTimes(1);
      expect(other).not.toHaveBeenCalled();
      const [payload, ctx] = created.mock.calls[0];
      expect(payload).toEqual(event);
      expect(ctx).toMatchObject({
        webhook: 'board',
        deliveryId: event.id,
        type: 'task.created',
        event,
        sequence: event.sequence,
        timestamp: Number(signed.headers['X-Svc-Timestamp']),
      });
      expect(ctx.req.headers['x-svc-event']).toBe('task.created');
      expect(typeof ctx.log.info).toBe('function');
      expect(ctx.signal.aborted).toBe(false);
    });

    it('is answered 200 when no handler is registered', async () => {
      const { app } = setup();
      const res = await post(app, PATH, signBoard(fixture('board', 'task.updated')));
      expect(res.status).toBe(200);
    });

    it('runs one handler registered for several types on each of them', async () => {
      const { board, app } = setup();
      const seen: string[] = [];
      board.on(['task.comment.created', 'task.comment.deleted'], (event) => void seen.push(event.comment.id));
      await post(app, PATH, signBoard(fixture('board', 'task.comment.created'))).expect(200);
      await post(app, PATH, signBoard(fixture('board', 'task.comment.deleted'))).expect(200);
      expect(seen).toHaveLength(2);
    });

    it('is accepted under a rotated secret while the old one is still configured', async () => {
      const { app } = setup({ secret: ['new-board-secret-0123456789', BOARD_SECRET] });
      await post(app, PATH, signBoard(fixture('board', 'task.created'))).expect(200);
      await post(app, PATH, signBoard(fixture('board', 'task.created'), { secret: 'new-board-secret-0123456789' })).expect(200);
    });
  });

  describe('an unknown event type', () => {
    it('is answered 200 and reaches only onAny', async () => {
      const { board, app } = setup();
      const any = jest.fn();
      const created = jest.fn();
      board.on('task.created', created).onAny(any);
      const event = fixture('board', 'task.updated', { type: 'task.label.added' });
      const res = await post(app, PATH, signBoard(event));
      expect(res.status).toBe(200);
      expect(any).toHaveBeenCalledTimes(1);
      expect(any.mock.calls[0][1].type).toBe('task.label.added');
      expect(created).not.toHaveBeenCalled();
    });
  });

  it.each([
    ['a partial task', { task: { id: 'x' } }],
    ['a null task and no changes', { task: null, changes: undefined }],
    ['no task at all', { task: undefined }],
  ])('an unknown event type with %s still reaches onAny: new types are validated by their envelope only', async (_what, overrides) => {
    const { board, app } = setup();
    const any = jest.fn();
    board.onAny(any);
    const event = fixture('board', 'task.updated', { type: 'task.label.added', ...overrides });
    await post(app, PATH, signBoard(JSON.parse(JSON.stringify(event)))).expect(200);
    expect(any).toHaveBeenCalledTimes(1);
  });

  it('accepts a sequence sent as a decimal string, and gives handlers a number in ctx and in the event', async () => {
    const { board, app } = setup();
    const sequences: unknown[] = [];
    board.on('task.created', (event, ctx) => void sequences.push(ctx.sequence, event.sequence));
    await post(app, PATH, signBoard(fixture('board', 'task.created', { sequence: '1234' }))).expect(200);
    // Both the context and the event say it as a number, as their types do.
    expect(sequences).toEqual([1234, 1234]);
  });

  describe('a duplicate delivery', () => {
    it('of one already handled is answered 200 without running handlers again', async () => {
      const { board, app } = setup();
      const handler = jest.fn();
      board.on('task.created', handler);
      const event = fixture('board', 'task.created');
      await post(app, PATH, signBoard(event)).expect(200);
      // A retry is signed again, with a later timestamp: the id is what de-duplicates.
      const res = await post(app, PATH, signBoard(event, { timestamp: Math.floor(Date.now() / 1000) + 1 }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, duplicate: true });
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it('while the first attempt still runs is answered 409 with Retry-After and does not run handlers', async () => {
      const { board, app } = setup();
      const gate = deferred();
      const started = deferred();
      const handler = jest.fn(async () => {
        started.resolve();
        await gate.promise;
      });
      board.on('task.created', handler);
      const signed = signBoard(fixture('board', 'task.created'));
      const first = post(app, PATH, signed).then((r) => r);
      await started.promise;

      const second = await post(app, PATH, signed);
      expect(second.status).toBe(409);
      expect(second.body.code).toBe('delivery_in_progress');
      expect(Number(second.headers['retry-after'])).toBeGreaterThan(0);

      gate.resolve();
      expect((await first).status).toBe(200);
      expect(handler).toHaveBeenCalledTimes(1);
    });
  });

  describe('a handler that throws', () => {
    it('gets 500 with a generic body, and the retry runs the handlers again', async () => {
      const { board, app } = setup();
      let calls = 0;
      board.on('task.created', () => {
        calls++;
        if (calls === 1) throw new Error('database password=hunter2 unreachable');
      });
      const event = fixture('board', 'task.created');
      const failed = await post(app, PATH, signBoard(event));
      expect(failed.status).toBe(500);
      expect(failed.body).toEqual({ ok: false, code: 'handler_failed', message: 'a handler failed' });
      expect(failed.text).not.toContain('hunter2');

      await post(app, PATH, signBoard(event)).expect(200);
      await post(app, PATH, signBoard(event)).expect(200, { ok: true, duplicate: true });
      expect(calls).toBe(2);
    });

    it('fails the delivery when any one of several handlers rejects', async () => {
      const { board, app } = setup();
      const ok = jest.fn();
      board.on('task.created', ok).onAny(async () => Promise.reject(new Error('nope')));
      const res = await post(app, PATH, signBoard(fixture('board', 'task.created')));
      expect(res.status).toBe(500);
      expect(ok).toHaveBeenCalledTimes(1);
    });
  });

  describe('a handler that outlives `timeout`', () => {
    it('gets 503 with Retry-After; the claim stays held until the handler settles, then the delivery counts as handled', async () => {
      const { board, app } = setup({ timeoutMs: 50 });
      const gate = deferred();
      const done = deferred();
      let signal: AbortSignal | undefined;
      const handler = jest.fn(async (_e: unknown, ctx: { signal: AbortSignal }) => {
        signal = ctx.signal;
        await gate.promise;
        setImmediate(() => done.resolve());
      });
      board.on('task.created', handler);
      const event = fixture('board', 'task.created');

      const slow = await post(app, PATH, signBoard(event));
      expect(slow.status).toBe(503);
      expect(slow.body.code).toBe('handler_timeout');
      expect(slow.headers['retry-after']).toBeDefined();
      expect(signal?.aborted).toBe(true);

      const during = await post(app, PATH, signBoard(event));
      expect(during.status).toBe(409);

      gate.resolve();
      await done.promise;
      await new Promise((r) => setImmediate(r));
      await post(app, PATH, signBoard(event)).expect(200, { ok: true, duplicate: true });
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it('keeps the claim past its lease while the handler still runs, so a retry never runs it concurrently', async () => {
      const { board, app } = setup({ timeoutMs: 20, leaseMs: 60 });
      const gate = deferred();
      const handler = jest.fn(() => gate.promise);
      board.on('task.created', handler);
      const event = fixture('board', 'task.created');
      await post(app, PATH, signBoard(event)).expect(503);
      await new Promise((r) => setTimeout(r, 200)); // more than three leases
      const retry = await post(app, PATH, signBoard(event));
      expect(retry.status).toBe(409);
      gate.resolve();
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it('releases the claim when the late handler fails, so the retry runs it', async () => {
      const { board, app } = setup({ timeoutMs: 30 });
      let calls = 0;
      const gate = deferred();
      board.on('task.created', async () => {
        calls++;
        if (calls === 1) {
          await gate.promise;
          throw new Error('late failure');
        }
      });
      const event = fixture('board', 'task.created');
      await post(app, PATH, signBoard(event)).expect(503);
      gate.resolve();
      await new Promise((r) => setTimeout(r, 20));
      await post(app, PATH, signBoard(event)).expect(200, { ok: true });
      expect(calls).toBe(2);
    });
  });

  describe('the signature', () => {
    const refused = async (
      signed: ReturnType<typeof signBoard>,
      code: string,
      extra: Record<string, string | string[]> = {},
      options: Parameters<typeof setup>[0] = {},
    ) => {
      const { board, app } = setup(options);
      const handler = jest.fn();
      board.onAny(handler);
      const res = await post(app, PATH, signed, extra);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe(code);
      expect(handler).not.toHaveBeenCalled();
      return res;
    };

    it('401 when missing', async () => {
      const signed = signBoard(fixture('board', 'task.created'));
      delete signed.headers['X-Svc-Signature'];
      await refused(signed, 'signature_missing');
    });

    it.each([
      ['the bot scheme', (hex: string) => `sha256=${hex}`],
      ['63 hex digits', (hex: string) => `v1=${hex.slice(1)}`],
      ['65 hex digits', (hex: string) => `v1=${hex}0`],
      ['a non-hex digit', (hex: string) => `v1=${hex.slice(1)}g`],
      ['surrounding text', (hex: string) => `v1=${hex}, v0=abc`],
      ['a leading space inside', (hex: string) => `v1= ${hex}`],
    ])('401 when malformed: %s', async (_what, make) => {
      const signed = signBoard(fixture('board', 'task.created'));
      const hex = signed.headers['X-Svc-Signature']!.slice(3);
      await refused(signed, 'signature_malformed', { 'X-Svc-Signature': make(hex) });
    });

    it('401 when sent twice, even if one of them is right', async () => {
      const signed = signBoard(fixture('board', 'task.created'));
      const good = signed.headers['X-Svc-Signature']!;
      await refused(signed, 'signature_duplicated', { 'X-Svc-Signature': [good, good] });
    });

    it('401 when made with another secret', async () => {
      await refused(signBoard(fixture('board', 'task.created'), { secret: 'some-other-secret-0123456789' }), 'signature_mismatch');
    });

    it('401 when the body was changed after signing', async () => {
      const signed = signBoard(fixture('board', 'task.created'));
      await refused({ ...signed, body: signed.body.replace('ENG-42', 'ENG-43') }, 'signature_mismatch');
    });

    it('401 when the body was re-serialised (whitespace differs from the signed bytes)', async () => {
      const event = fixture('board', 'task.created');
      const signed = signBoard(event, { body: JSON.stringify(event, null, 2) });
      await refused({ ...signed, body: JSON.stringify(event) }, 'signature_mismatch');
    });

    it('401 when the timestamp was changed after signing', async () => {
      const signed = signBoard(fixture('board', 'task.created'));
      const ts = String(Number(signed.headers['X-Svc-Timestamp']) - 1);
      await refused(signed, 'signature_mismatch', { 'X-Svc-Timestamp': ts });
    });

    it('401 when the timestamp is missing', async () => {
      const signed = signBoard(fixture('board', 'task.created'));
      delete signed.headers['X-Svc-Timestamp'];
      await refused(signed, 'timestamp_missing');
    });

    it.each(['1.7e9', '-1700000000', '+1700000000', '0x6553f100', '1700000000.5', '', '9999999999999999'])(
      '401 when the timestamp is malformed: %j',
      async (ts) => {
        const event = fixture('board', 'task.created');
        const body = JSON.stringify(event);
        const signed = signBoard(event, { body });
        // Signed over the malformed text too, so only the format check can refuse it.
        signed.headers['X-Svc-Signature'] = `v1=${hmacHex(BOARD_SECRET, ts, '.', body)}`;
        await refused(signed, 'timestamp_malformed', { 'X-Svc-Timestamp': ts });
      },
    );

    it.each([
      ['more than 300 s old', -301],
      ['more than 300 s ahead', 301],
    ])('401 when the timestamp is %s', async (_what, offset) => {
      // On the injected clock: against the wall clock, a slow run could bring 301 s ahead within the tolerance.
      const now = 1_800_000_000_000;
      const signed = signBoard(fixture('board', 'task.created'), { timestamp: now / 1000 + offset });
      await refused(signed, 'timestamp_out_of_tolerance', {}, { now: () => now });
    });

    it('accepts a timestamp at the edge of the tolerance, measured with the injected clock', async () => {
      const now = 1_800_000_000_000;
      const { app } = setup({ now: () => now, toleranceSeconds: 60 });
      await post(app, PATH, signBoard(fixture('board', 'task.created'), { timestamp: now / 1000 - 60 })).expect(200);
      await post(app, PATH, signBoard(fixture('board', 'task.created'), { timestamp: now / 1000 + 60 })).expect(200);
      const late = await post(app, PATH, signBoard(fixture('board', 'task.created'), { timestamp: now / 1000 - 61 }));
      expect(late.body.code).toBe('timestamp_out_of_tolerance');
    });
  });

  describe('a body that is not a usable event', () => {
    const badRequest = async (signed: ReturnType<typeof signBoard>, code: string, extra: Record<string, string> = {}) => {
      const { board, app } = setup();
      const handler = jest.fn();
      board.onAny(handler);
      const res = await post(app, PATH, signed, extra);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(code);
      expect(handler).not.toHaveBeenCalled();
    };

    it('400 for invalid JSON', async () => {
      await badRequest(signBoard({ id: 'x', type: 'ping' }, { body: '{"id": "x", "type": ' }), 'invalid_json');
    });

    it.each(['__proto__', 'constructor'])('400 for a %s key anywhere in the body', async (key) => {
      const event = fixture('board', 'task.updated');
      const body = JSON.stringify(event).replace('"before":{', `"before":{"${key}":{"polluted":true},`);
      await badRequest(signBoard(event, { body }), 'forbidden_key');
    });

    it('400 for a forbidden key spelt with unicode escapes', async () => {
      const event = fixture('board', 'task.updated');
      const body = JSON.stringify(event).replace('"before":{', '"before":{"\\u005f\\u005fproto\\u005f\\u005f":{"polluted":true},');
      await badRequest(signBoard(event, { body }), 'forbidden_key');
    });

    it('400 when the body id differs from X-Svc-Delivery', async () => {
      const signed = signBoard(fixture('board', 'task.created'));
      await badRequest(signed, 'delivery_id_mismatch', { 'X-Svc-Delivery': '00000000-0000-4000-8000-000000000000' });
    });

    it('400 when the body type differs from X-Svc-Event', async () => {
      await badRequest(signBoard(fixture('board', 'task.created')), 'event_type_mismatch', { 'X-Svc-Event': 'task.updated' });
    });

    it('400 schema_violation for an authentic event that breaks the schema', async () => {
      const event = fixture('board', 'task.created');
      event.task.number = 'forty-two';
      await badRequest(signBoard(event), 'schema_violation');
    });

    it('400 schema_violation for a task.moved_out without its moved_board change', async () => {
      const event = fixture('board', 'task.moved_out', { changes: [] });
      await badRequest(signBoard(event), 'schema_violation');
    });
  });

  describe('with schemaPolicy', () => {
    it('"warn": an event that breaks the schema is handled', async () => {
      const { board, app } = setup({ schemaPolicy: 'warn' });
      const handler = jest.fn();
      board.on('task.created', handler);
      const event = fixture('board', 'task.created');
      event.task.number = 'forty-two';
      await post(app, PATH, signBoard(event)).expect(200);
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it('"skip": routing still needs an id, a type and a sequence', async () => {
      const { board, app } = setup({ schemaPolicy: 'skip' });
      const handler = jest.fn();
      board.onAny(handler);
      const res = await post(app, PATH, signBoard({ id: 'not-a-uuid', type: 42 } as never));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('schema_violation');
      await post(app, PATH, signBoard({ id: 'not-a-uuid', type: 'task.created', sequence: 1 })).expect(200);
      expect(handler).toHaveBeenCalledTimes(1);
    });
  });

  describe('graceful shutdown', () => {
    it('close() answers new deliveries 503 and resolves once running handlers have committed', async () => {
      const { board, app } = setup();
      const gate = deferred();
      const started = deferred();
      board.on('task.created', async () => {
        started.resolve();
        await gate.promise;
      });
      const running = post(app, PATH, signBoard(fixture('board', 'task.created'))).then((r) => r);
      await started.promise;
      let closed = false;
      const closing = board.close().then(() => (closed = true));

      const refused = await post(app, PATH, signBoard(fixture('board', 'task.created')));
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('shutting_down');
      expect(closed).toBe(false);

      gate.resolve();
      expect((await running).status).toBe(200);
      await closing;
      expect(closed).toBe(true);
    });
  });
});
