/**
 * Type tests: `npm test` type-checks the whole project (tsc --noEmit) before jest runs, so every
 * `@ts-expect-error` here that stops being an error, or a narrowing that stops holding, fails it.
 */
import { createLambdaHandler, svcBoardWebhook, svcBotWebhook, type BoardEventMap, type BotEventMap } from '../../../src';
import { silentLogger } from '../../../src/testing';

const SECRET = 'a-secret-of-sixteen+';

describe('the typed API', () => {
  it('narrows the board event by its type', () => {
    const board = svcBoardWebhook(SECRET);
    board.on('task.moved_out', (event, ctx) => {
      const key: string = event.task.key;
      // @ts-expect-error a moved-out task carries only id, key and board_id
      void event.task.title;
      const field: 'moved_board' = event.changes[0]!.field;
      const n: number = ctx.sequence;
      const sequence: number = event.sequence; // normalized from a decimal string when sent as one
      // @ts-expect-error the sequence is never a string by the time a handler sees it
      const asString: string = event.sequence;
      void [key, field, n, sequence, asString];
    });
    board.on('task.comment.created', (event) => {
      const text: string = event.comment.text; // not null for comment events
      void text;
    });
    board.on('task.created', (event) => {
      const comment: null = event.comment;
      const size: string | undefined = event.task.attachments.length > 0 ? '0' : undefined;
      void [comment, size];
    });
    board.on(['task.created', 'task.updated'], (event) => {
      const type: 'task.created' | 'task.updated' = event.type;
      void type;
    });
    // @ts-expect-error unknown types are for onAny
    expect(() => board.on('task.creatd', () => undefined)).toThrow();
    board.onAny((event, ctx) => {
      const type: string = ctx.type;
      void [event.id, type];
    });
    const map: keyof BoardEventMap = 'ping';
    expect(map).toBe('ping');
  });

  it('narrows the bot data by its kind, and types commands', () => {
    const bot = svcBotWebhook(SECRET);
    bot.on('messageCreate', (data, ctx) => {
      const content: string = data.message.content;
      const kind: string = ctx.kind;
      const created: string = ctx.update.createdAt;
      void [content, kind, created];
    });
    bot.command('deploy', (data) => {
      // A command handler runs only for messages that carry the command: it is never null there.
      const args: string = data.message.command.args;
      const name: string = data.message.command.name;
      void [args, name];
    });
    bot.on('messageCreate', (data) => {
      // @ts-expect-error outside .command() a message may carry no command
      void data.message.command.name;
    });
    bot.on('botCallback', (data) => {
      const anything: unknown = data.whatever;
      void anything;
    });
    // @ts-expect-error unknown kinds are for onAny
    expect(() => bot.on('voiceStateUpdate', () => undefined)).toThrow();
    const kind: keyof BotEventMap = 'taskNotice';
    expect(kind).toBe('taskNotice');
  });

  it('types the secret resolver by webhook: a board claim for boards, a bot claim for bots', () => {
    const board = svcBoardWebhook({ secret: async ({ boardId }) => (boardId === 'b' ? 'board-secret-0123456789' : undefined), logger: silentLogger });
    const bot = svcBotWebhook({ path: '/webhooks/bots/:botId', secret: ({ botId }) => [`${botId}-secret-0123456789abcdef`], logger: silentLogger });
    // @ts-expect-error a board delivery claims a board, not a bot
    expect(() => svcBoardWebhook({ secret: ({ botId }) => botId, logger: silentLogger })).not.toThrow();
    expect(board.forgetSecret('b')).toBe(board);
    expect(bot.forgetSecret('x')).toBe(bot);
  });

  it('answers each kind of Lambda event in its own result type', async () => {
    const handler = createLambdaHandler(svcBoardWebhook({ secret: SECRET, logger: silentLogger }));
    const alb = await handler({ requestContext: { elb: {} }, httpMethod: 'POST', path: '/', body: null, isBase64Encoded: false });
    const line: string = alb.statusDescription;
    const v2 = await handler({ version: '2.0', rawPath: '/', requestContext: { http: { method: 'POST' } }, isBase64Encoded: false });
    // @ts-expect-error only an ALB's result has a status line
    void v2.statusDescription;
    const v1 = await handler({ path: '/', httpMethod: 'POST', headers: null, requestContext: {}, body: null, isBase64Encoded: false });
    const headers: Readonly<Record<string, string>> = v1.headers;
    void [line, headers];
    // No Content-Type: each is refused, in its own shape.
    expect([alb.statusCode, v2.statusCode, v1.statusCode]).toEqual([415, 415, 415]);
  });
});
