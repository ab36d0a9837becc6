/**
 * The checks that hold whatever the schema policy: routing and replay protection depend on them,
 * so they are tested with `schemaPolicy: 'skip'`, where no JSON Schema stands in front of them.
 */
import express5 from 'express';
import { randomUUID } from 'node:crypto';
import { SPEC_BODY_BYTES } from '../../src/webhooks/webhook-options';
import { svcBoardWebhook, svcBotWebhook } from '../../src';
import { appWith, silentLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, BOT_SECRET, fixture, signBoard, signBot } from '../support/sign';

const BOARD = '/webhooks/board';
const BOT = '/webhooks/bot';

function board(options: Record<string, unknown> = {}) {
  const webhook = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, schemaPolicy: 'skip', ...options });
  const handler = jest.fn();
  webhook.onAny(handler);
  return { app: appWith(express5, webhook), handler };
}

function bot() {
  const webhook = svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger, schemaPolicy: 'skip' });
  const any = jest.fn();
  const command = jest.fn();
  webhook.onAny(any).command('deploy', command);
  return { app: appWith(express5, webhook), any, command };
}

describe('a board event under schemaPolicy "skip"', () => {
  it.each([
    ['negative', -1],
    ['fractional', 1.5],
    ['null', null],
    ['the empty string', ''],
    ['hexadecimal text', '0x1f'],
    ['exponent text', '1e3'],
    ['signed text', '+7'],
    ['beyond 2^53', 2 ** 53],
    ['a boolean', true],
    ['an array of one number', [7]],
    ['missing', undefined],
  ])('with a %s `sequence` is refused 400 schema_violation naming `sequence`', async (_what, sequence) => {
    const { app, handler } = board();
    const res = await post(app, BOARD, signBoard(fixture('board', 'task.created', { sequence })));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('schema_violation');
    expect(res.body.message).toMatch(/`sequence`/);
    expect(handler).not.toHaveBeenCalled();
  });

  it.each([
    ['0 (ping)', 0, 0],
    ['a number', 42, 42],
    ['decimal text', '42', 42],
    ['the largest safe integer', Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  ])('with %s as `sequence` is handled, ctx.sequence a number', async (_what, sequence, expected) => {
    const { app, handler } = board();
    await post(app, BOARD, signBoard(fixture('board', 'task.created', { sequence }))).expect(200);
    expect(handler.mock.calls[0][1].sequence).toBe(expected);
  });

  it.each([
    ['empty', ''],
    ['not a string', 7],
    ['missing', undefined],
  ])('with an %s `id` is refused 400: every such delivery would share one de-dup key', async (_what, id) => {
    const { app, handler } = board();
    const event = fixture('board', 'task.created', { id });
    const signed = signBoard(event);
    delete signed.headers['X-Svc-Delivery'];
    const res = await post(app, BOARD, signed);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('schema_violation');
    expect(handler).not.toHaveBeenCalled();
  });

  it('with a `type` that is not a string is refused 400', async () => {
    const { app } = board();
    const signed = signBoard(fixture('board', 'task.created', { type: 5 }));
    delete signed.headers['X-Svc-Event'];
    const res = await post(app, BOARD, signed);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('schema_violation');
  });
});

describe('headers that repeat the signed body', () => {
  it('a board event whose X-Svc-Delivery names another delivery is refused 400 delivery_id_mismatch', async () => {
    const { app, handler } = board();
    const res = await post(app, BOARD, signBoard(fixture('board', 'task.created')), { 'X-Svc-Delivery': randomUUID() });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('delivery_id_mismatch');
    expect(handler).not.toHaveBeenCalled();
  });

  it('a board event whose X-Svc-Event names another type is refused 400 event_type_mismatch', async () => {
    const { app, handler } = board();
    const res = await post(app, BOARD, signBoard(fixture('board', 'task.created')), { 'X-Svc-Event': 'task.deleted' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('event_type_mismatch');
    expect(handler).not.toHaveBeenCalled();
  });

  it('a bot update whose X-Svc-Delivery names another delivery is refused 400 delivery_id_mismatch', async () => {
    const { app, any } = bot();
    const res = await post(app, BOT, signBot(fixture('bot', 'messageCreate')), { 'X-Svc-Delivery': randomUUID() });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('delivery_id_mismatch');
    expect(any).not.toHaveBeenCalled();
  });
});

describe('a bot update under schemaPolicy "skip"', () => {
  it.each([
    ['an array', () => [fixture('bot', 'messageCreate')]],
    ['a string', () => 'update'],
    ['without `id`', () => fixture('bot', 'messageCreate', { id: undefined })],
    ['with a numeric `id`', () => fixture('bot', 'messageCreate', { id: 42 })],
    ['with an empty `id` (every such update would share one de-dup key)', () => fixture('bot', 'messageCreate', { id: '' })],
    ['without `event`', () => fixture('bot', 'messageCreate', { event: undefined })],
    ['whose `event` is an array', () => fixture('bot', 'messageCreate', { event: [{ workspaceId: 'w' }] })],
  ])('that is %s is refused 400 schema_violation', async (_what, update) => {
    const { app, any } = bot();
    const res = await post(app, BOT, signBot(update() as Record<string, unknown>));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('schema_violation');
    expect(any).not.toHaveBeenCalled();
  });

  it('whose `createdAt` is a number that reads as a year is refused 400, not judged by its age', async () => {
    const { app, any } = bot();
    const res = await post(app, BOT, signBot(fixture('bot', 'messageCreate', { createdAt: 2026 })));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('schema_violation');
    expect(any).not.toHaveBeenCalled();
  });

  it('exactly as old as the retry window plus margin is still handled; a millisecond older is refused', async () => {
    const createdAt = '2026-01-01T00:00:00.000Z';
    const at = (ms: number) => {
      const webhook = svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger, schemaPolicy: 'skip', now: () => Date.parse(createdAt) + ms });
      return appWith(
        express5,
        webhook.onAny(() => undefined),
      );
    };
    const maxAge = 25 * 3600_000;
    await post(at(maxAge), BOT, signBot(fixture('bot', 'messageCreate', { createdAt }))).expect(200);
    const res = await post(at(maxAge + 1), BOT, signBot(fixture('bot', 'messageCreate', { createdAt })));
    expect(res.body.code).toBe('delivery_expired');
  });

  it('whose `event` has two members is refused 400: its kind is ambiguous', async () => {
    const { app, any } = bot();
    const update = fixture('bot', 'messageCreate');
    update.event.taskCreate = { workspaceId: 'w' };
    const res = await post(app, BOT, signBot(update));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('schema_violation');
    expect(any).not.toHaveBeenCalled();
  });

  it('whose `event` member is not an object is refused 400', async () => {
    const { app } = bot();
    const res = await post(app, BOT, signBot(fixture('bot', 'messageCreate', { event: { messageCreate: 'text' } })));
    expect(res.status).toBe(400);
  });

  it.each([
    ['not a date', 'yesterday'],
    ['missing', undefined],
    ['a number', 1_700_000_000_000],
  ])('with a `createdAt` that is %s is refused 400: the replay-age check cannot be skipped', async (_what, createdAt) => {
    const { app, any } = bot();
    const res = await post(app, BOT, signBot(fixture('bot', 'messageCreate', { createdAt })));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('schema_violation');
    expect(any).not.toHaveBeenCalled();
  });

  it('older than the retry window plus margin is refused 401 delivery_expired; one just inside it is handled', async () => {
    const { app, any } = bot();
    const hour = 3600_000;
    const old = fixture('bot', 'messageCreate', { createdAt: new Date(Date.now() - 25 * hour - 60_000).toISOString() });
    const res = await post(app, BOT, signBot(old));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('delivery_expired');
    const recent = fixture('bot', 'messageCreate', { createdAt: new Date(Date.now() - 25 * hour + 60_000).toISOString() });
    await post(app, BOT, signBot(recent)).expect(200);
    expect(any).toHaveBeenCalledTimes(1);
  });

  it('runs command handlers only for messageCreate, even when another kind carries a command-shaped message', async () => {
    const { app, command } = bot();
    const update = fixture('bot', 'messageCreate');
    const message = { ...update.event.messageCreate.message, command: { botUserId: update.botUserId, name: 'deploy', args: '' } };
    await post(app, BOT, signBot({ ...update, id: randomUUID(), event: { messageUpdate: { workspaceId: 'w', message } } })).expect(200);
    expect(command).not.toHaveBeenCalled();
    await post(app, BOT, signBot({ ...update, id: randomUUID(), event: { messageCreate: { workspaceId: 'w', message } } })).expect(200);
    expect(command).toHaveBeenCalledTimes(1);
  });
});

describe('the body limit', () => {
  /** A signed board event of exactly `bytes` bytes (padding in the task's description). */
  function eventOfSize(bytes: number) {
    const event = fixture('board', 'task.created');
    const base = Buffer.byteLength(JSON.stringify(event));
    event.task = { ...event.task, description: `${event.task.description}${'x'.repeat(bytes - base)}` };
    const signed = signBoard(event);
    expect(Buffer.byteLength(signed.body)).toBe(bytes);
    return signed;
  }

  it('accepts a body of exactly `limit` bytes and refuses one byte more with 413', async () => {
    const { app } = board({ maxBodyBytes: SPEC_BODY_BYTES });
    await post(app, BOARD, eventOfSize(SPEC_BODY_BYTES)).expect(200);
    const res = await post(app, BOARD, eventOfSize(SPEC_BODY_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('body_too_large');
  });

  it('holds for a body that express.raw() already read with a larger limit of its own', async () => {
    const webhook = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, maxBodyBytes: SPEC_BODY_BYTES });
    const app = express5();
    app.post(BOARD, express5.raw({ type: 'application/json', limit: '1mb' }), webhook);
    await post(app, BOARD, eventOfSize(SPEC_BODY_BYTES)).expect(200);
    const res = await post(app, BOARD, eventOfSize(SPEC_BODY_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('body_too_large');
  });
});

describe('Content-Encoding', () => {
  it.each([['identity'], ['IDENTITY'], [' identity ']])('%s is the body as it is: accepted', async (encoding) => {
    const { app } = board();
    await post(app, BOARD, signBoard(fixture('board', 'task.created')), { 'Content-Encoding': encoding }).expect(200);
  });

  it.each([['gzip'], ['deflate'], ['identity, gzip']])('%s is refused 415 content_encoding_unsupported', async (encoding) => {
    const { app } = board();
    const res = await post(app, BOARD, signBoard(fixture('board', 'task.created')), { 'Content-Encoding': encoding });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('content_encoding_unsupported');
  });
});
