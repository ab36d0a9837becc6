import { svcBoardWebhook, svcBotWebhook, type DeliveryRecord, type ErrorContext, type SvcWebhookError } from '../../src';
import { appWith, expressVersions, memoryLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, BOT_SECRET, fixture, signBoard, signBot } from '../support/sign';

describe.each(expressVersions)('logging and error reporting in %s', (_name, expressLib) => {
  it('writes one structured line per delivery with id, kind, outcome, status and duration', async () => {
    const log = memoryLogger();
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: log.logger }).on('task.created', (_e, ctx) =>
      ctx.log.info({ step: 'inside' }, 'handler ran'),
    );
    const app = appWith(expressLib, board);
    const event = fixture('board', 'task.created');
    await post(app, board.path, signBoard(event)).expect(200);

    const deliveryLines = log.lines.filter((l) => l.outcome !== undefined);
    expect(deliveryLines).toHaveLength(1);
    expect(deliveryLines[0]).toMatchObject({ webhook: 'board', deliveryId: event.id, kind: 'task.created', outcome: 'handled', status: 200 });
    expect(typeof deliveryLines[0]!.durationMs).toBe('number');
    // The handler's child logger carries the delivery.
    expect(log.lines.find((l) => l.step === 'inside')).toMatchObject({ deliveryId: event.id, kind: 'task.created', webhook: 'board' });
  });

  it('logs refusals with their code and errors under `err`, and never a secret or a signature', async () => {
    const log = memoryLogger();
    const bot = svcBotWebhook({ secret: BOT_SECRET, logger: log.logger }).on('messageCreate', (_d, ctx) => {
      // A careless handler logging the request headers still leaks nothing.
      ctx.log.info({ headers: ctx.req?.headers, secret: BOT_SECRET }, 'careless');
      throw new Error('boom');
    });
    const app = appWith(expressLib, bot);
    const signed = signBot(fixture('bot', 'messageCreate'));
    await post(app, bot.path, signed).expect(500);
    await post(app, bot.path, signBot(fixture('bot', 'messageCreate'), { secret: 'wrong-secret-0123456789abcdef' })).expect(401);

    const refused = log.lines.filter((l) => l.outcome === 'rejected');
    expect(refused.map((l) => [l.status, l.code])).toEqual([
      [500, 'handler_failed'],
      [401, 'signature_mismatch'],
    ]);
    expect(refused[0]!.err).toMatchObject({ type: 'SvcWebhookError', code: 'handler_failed' });
    expect(refused[0]!.err.stack).toContain('boom');
    const text = log.text();
    expect(text).not.toContain(BOT_SECRET);
    expect(text).not.toContain(signed.headers['X-Svc-Signature']!.slice('sha256='.length));
    expect(text).toContain('[Redacted]');
  });

  it('tells onError handlers of every delivery answered with an error, with its code', async () => {
    const seen: Array<[string, number, ErrorContext['deliveryId']]> = [];
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: memoryLogger().logger })
      .on('task.created', () => {
        throw new Error('handler failed');
      })
      .onError((err: SvcWebhookError, ctx) => void seen.push([err.code, err.status, ctx.deliveryId]));
    const app = appWith(expressLib, board);
    const event = fixture('board', 'task.created');
    await post(app, board.path, signBoard(event)).expect(500);
    await post(app, board.path, signBoard(event, { secret: 'wrong-secret-0123456789abcdef' })).expect(401);
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([
      ['handler_failed', 500, event.id],
      ['signature_mismatch', 401, undefined],
    ]);
  });

  it('logs, and survives, observers that throw or reject', async () => {
    const log = memoryLogger();
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: log.logger })
      .onDelivery(async () => Promise.reject(new Error('metrics database down')))
      .onDelivery(() => {
        throw new Error('sync failure');
      })
      .onError(async () => Promise.reject(new Error('pager down')));
    const app = appWith(expressLib, board);
    await post(app, board.path, signBoard(fixture('board', 'ping'))).expect(200);
    await post(app, board.path, signBoard(fixture('board', 'ping'), { secret: 'wrong-secret-0123456789abcdef' })).expect(401);
    await new Promise((r) => setImmediate(r));
    expect(log.lines.filter((l) => l.msg === 'an onDelivery listener failed')).toHaveLength(4);
    expect(log.lines.filter((l) => l.msg === 'an onError handler failed')).toHaveLength(1);
  });

  it('reports every answered request to onDelivery listeners', async () => {
    const records: unknown[] = [];
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: memoryLogger().logger, now: () => 1_800_000_000_000 }).onDelivery(
      (r) => void records.push(r),
    );
    const app = appWith(expressLib, board);
    const event = fixture('board', 'ping');
    await post(app, board.path, signBoard(event, { timestamp: 1_800_000_000 })).expect(200);
    await post(app, board.path, signBoard(event, { timestamp: 1_800_000_000 })).expect(200);
    await post(app, board.path, signBoard(event, { timestamp: 1 })).expect(401);
    await new Promise((r) => setImmediate(r));
    expect(records).toEqual([
      expect.objectContaining({
        webhook: 'board',
        deliveryId: event.id,
        kind: 'ping',
        outcome: 'handled',
        status: 200,
        receivedAt: 1_800_000_000_000,
        payload: event,
      }),
      expect.objectContaining({ deliveryId: event.id, outcome: 'duplicate', status: 200 }),
      expect.objectContaining({ deliveryId: undefined, outcome: 'rejected', status: 401, code: 'timestamp_out_of_tolerance', verified: false }),
    ]);
    expect(records[0]).toMatchObject({ verified: true });
    // Refused before the body was read: there is no body and no payload to show.
    expect(records[2]).not.toHaveProperty('payload');
    expect(records[2]).not.toHaveProperty('body');
    expect(typeof (records[2] as { message?: unknown }).message).toBe('string');
  });

  it('explains a schema refusal in its record: the delivery it names, the failing paths and the verified payload', async () => {
    const records: DeliveryRecord[] = [];
    const errors: ErrorContext[] = [];
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: memoryLogger().logger })
      .onDelivery((r) => void records.push(r))
      .onError((_e, ctx) => void errors.push(ctx));
    const app = appWith(expressLib, board);
    const event = fixture('board', 'task.created');
    event.task.title = 42;
    const signed = signBoard(event);
    await post(app, board.path, signed).expect(400);
    await new Promise((r) => setImmediate(r));

    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      deliveryId: event.id,
      kind: 'task.created',
      outcome: 'rejected',
      status: 400,
      code: 'schema_violation',
      verified: true,
      payload: event,
    });
    expect(records[0]!.problems).toEqual(expect.arrayContaining([expect.objectContaining({ path: '/task/title' })]));
    expect(records[0]!.message).toContain('/task/title');
    expect(Buffer.from(records[0]!.body!).toString('utf8')).toBe(signed.body);
    expect(errors[0]).toMatchObject({ deliveryId: event.id, kind: 'task.created' });
  });

  it("gives a forged request's record its raw body marked unverified, and no payload", async () => {
    const records: DeliveryRecord[] = [];
    const bot = svcBotWebhook({ secret: BOT_SECRET, logger: memoryLogger().logger }).onDelivery((r) => void records.push(r));
    const app = appWith(expressLib, bot);
    const forged = signBot(fixture('bot', 'messageCreate'), { secret: 'not-the-bot-secret-0123456789abcd' });
    await post(app, bot.path, forged).expect(401);
    await new Promise((r) => setImmediate(r));

    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ outcome: 'rejected', status: 401, code: 'signature_mismatch', verified: false });
    expect(records[0]!.deliveryId).toBeUndefined();
    expect(records[0]).not.toHaveProperty('payload');
    expect(Buffer.from(records[0]!.body!).toString('utf8')).toBe(forged.body);
    expect(JSON.stringify(records[0])).not.toContain(forged.headers['X-Svc-Signature']!.slice('sha256='.length));
  });
});
