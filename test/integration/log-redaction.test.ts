import express from 'express';
import { svcBoardWebhook, type BoardWebhookOptions } from '../../src';
import { memoryLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, fixture, signBoard } from '../support/sign';

const RESOLVED_SECRET = 'the-secret-of-board-b-0123456789';

const TOKEN = 'svc_oa_AAAAAAAAAAAAAAAAAAAA.BBBB+/=CCCC';

describe('what the logger drops, whatever a handler logs', () => {
  it('drops the configured secret, signatures, credential fields in any case and at any depth, and svc tokens', async () => {
    const log = memoryLogger();
    const options: BoardWebhookOptions = { secret: BOARD_SECRET, logger: log.logger };
    const board = svcBoardWebhook(options).on('task.created', (_e, ctx) => {
      ctx.log.info({ requestHeaders: { ...ctx.req!.headers }, Authorization: 'Bearer abc', options }, 'headers under another key');
      ctx.log.warn({ raw: ctx.req!.rawHeaders, note: `signed ${ctx.req!.headers['x-svc-signature']}` }, 'raw headers');
      ctx.log.debug({ config: { nested: { deeper: { SECRET: 'x' } } }, text: `the secret is ${BOARD_SECRET}`, token: TOKEN, said: `token ${TOKEN}` }, 'deep');
      ctx.log.child({ step: 'child' }).error({ err: new Error(`failed with ${BOARD_SECRET}`) }, 'child binding');
      ctx.log.info({ req: ctx.req }, 'the whole request');
    });
    const app = express().use(board);
    const signed = signBoard(fixture('board', 'task.created'));
    await post(app, board.path, signed, { Authorization: 'Bearer person-token-0123456789abcdef' }).expect(200);
    const text = log.text();
    expect(text).toContain('headers under another key');
    expect(text).toContain('the whole request');
    expect(text).not.toContain(BOARD_SECRET);
    expect(text).not.toContain(signed.headers['X-Svc-Signature']!.slice(3));
    expect(text).not.toContain('person-token-0123456789abcdef');
    expect(text).not.toContain('BBBB');
    expect(text).not.toMatch(/[0-9a-f]{64}/);
  });

  it('drops them from the message too: an error logged alone, a message with them in it, interpolated values', async () => {
    const log = memoryLogger();
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: log.logger }).on('task.created', (_e, ctx) => {
      const signature = String(ctx.req!.headers['x-svc-signature']);
      ctx.log.error(new Error(`cannot connect with ${BOARD_SECRET} (${signature}, ${TOKEN})`));
      ctx.log.warn(`retrying with ${BOARD_SECRET}`);
      (ctx.log as import('pino').Logger).info('signed %s by %s', signature, BOARD_SECRET);
      ctx.log.child({ step: 'child' }).info({ ok: true }, `child ${BOARD_SECRET}`);
    });
    const signed = signBoard(fixture('board', 'task.created'));
    await post(express().use(board), board.path, signed).expect(200);
    const messages = log.lines.map((l) => l.msg as string);
    expect(messages).toEqual(
      expect.arrayContaining([
        'cannot connect with [Redacted] (v1=[Redacted], svc_oa_…[redacted])',
        'retrying with [Redacted]',
        'signed v1=[Redacted] by [Redacted]',
        'child [Redacted]',
      ]),
    );
    const text = log.text();
    expect(text).not.toContain(BOARD_SECRET);
    expect(text).not.toContain(signed.headers['X-Svc-Signature']!.slice(3));
    expect(text).not.toContain('BBBB');
  });

  it('drops the secret of the board that verified the delivery from the message, with a resolver', async () => {
    const log = memoryLogger();
    const board = svcBoardWebhook({ path: '/webhooks/boards', secret: () => RESOLVED_SECRET, logger: log.logger }).on('task.created', (_e, ctx) => {
      ctx.log.error(new Error(`cannot connect with ${RESOLVED_SECRET}`));
    });
    await post(express().use(board), '/webhooks/boards', signBoard(fixture('board', 'task.created'), { secret: RESOLVED_SECRET })).expect(200);
    expect(log.lines.map((l) => l.msg)).toContain('cannot connect with [Redacted]');
    expect(log.text()).not.toContain(RESOLVED_SECRET);
  });
});
