import { Writable } from 'node:stream';
import winston from 'winston';
import { svcBoardWebhook, type BoardWebhookMiddleware } from '../../src';
import { appWith, expressVersions } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, fixture, signBoard } from '../support/sign';

const TOKEN = `svc_bot_3f2504e0-4f89-11d3-9a0c-0305e82c3301_${'A'.repeat(43)}`;
const express = expressVersions[1]![1];

/** A handler that logs the secret every careless way: in fields, in the message, in an error. */
function careless(board: BoardWebhookMiddleware): BoardWebhookMiddleware {
  return board
    .on('task.created', (_event, ctx) => {
      ctx.log.info({ secret: BOARD_SECRET, note: `secret ${BOARD_SECRET}`, nested: { token: TOKEN } }, `message with ${BOARD_SECRET}`);
      ctx.log.child({ step: 'child' }).warn(`child line with ${TOKEN}`);
      ctx.log.error(new Error(`failed with ${BOARD_SECRET}`));
    })
    .on('task.updated', () => {
      throw new Error(`handler quoted ${BOARD_SECRET}`);
    });
}

async function deliverBoth(board: BoardWebhookMiddleware): Promise<void> {
  const app = appWith(express, board);
  await post(app, board.path, signBoard(fixture('board', 'task.created'))).expect(200);
  await post(app, board.path, signBoard(fixture('board', 'task.updated'))).expect(500);
  await board.close();
}

function expectClean(text: string): void {
  expect(text).not.toContain(BOARD_SECRET);
  expect(text).not.toContain('A'.repeat(20));
}

describe('logger: console', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs every delivery through console.info/warn/error as (message, fields), scrubbed of secrets and tokens', async () => {
    const calls: unknown[][] = [];
    for (const level of ['info', 'warn', 'error', 'debug'] as const)
      jest.spyOn(console, level).mockImplementation((...args: unknown[]) => void calls.push([level, ...args]));
    await deliverBoth(careless(svcBoardWebhook({ secret: BOARD_SECRET, logger: console })));

    const received = calls.filter(([, message]) => message === 'delivery received');
    expect(received).toEqual([
      ['info', 'delivery received', expect.objectContaining({ webhook: 'board', kind: 'task.created', outcome: 'handled', status: 200 })],
    ]);
    const refused = calls.find(([, , fields]) => (fields as { code?: string } | undefined)?.code === 'handler_failed')!;
    expect(refused[1]).not.toMatch(/refused/);
    expect(refused[0]).toBe('error');
    expect(refused[2]).toMatchObject({ webhook: 'board', status: 500, code: 'handler_failed', err: { type: 'SvcWebhookError', code: 'handler_failed' } });
    // The handler's own lines carry the delivery and the child's fields.
    expect(calls.find(([, message]) => String(message).startsWith('message with'))![2]).toMatchObject({ kind: 'task.created', secret: '[Redacted]' });
    expect(calls.find(([, message]) => String(message).startsWith('child line'))![2]).toMatchObject({ step: 'child', kind: 'task.created' });
    // An error logged alone is the line's `err`, as pino logs it.
    expect(
      calls.find(([level, , fields]) => level === 'error' && (fields as { err?: { message?: string } }).err?.message?.startsWith('failed with')),
    ).toBeDefined();
    expectClean(JSON.stringify(calls));
  });
});

describe('logger: winston', () => {
  it('logs every delivery through winston, scrubbed of secrets and tokens', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = winston.createLogger({ level: 'debug', format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] });
    await deliverBoth(careless(svcBoardWebhook({ secret: BOARD_SECRET, logger })));

    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.filter((l) => l.message === 'delivery received')).toEqual([
      expect.objectContaining({ level: 'info', webhook: 'board', outcome: 'handled', status: 200 }),
    ]);
    expect(parsed.find((l) => l.code === 'handler_failed')).toMatchObject({ level: 'error', status: 500, code: 'handler_failed' });
    expect(parsed.find((l) => String(l.message).startsWith('message with'))).toMatchObject({ secret: '[Redacted]', note: 'secret [Redacted]' });
    expectClean(lines.join('\n'));
  });
});

describe('logger: a bunyan-like logger (it has streams)', () => {
  it('is called fields first, as bunyan and pino take them', async () => {
    const calls: unknown[][] = [];
    const logger = {
      streams: [],
      info: (...a: unknown[]) => void calls.push(a),
      warn: (...a: unknown[]) => void calls.push(a),
      error: (...a: unknown[]) => void calls.push(a),
    };
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger });
    await post(appWith(express, board), board.path, signBoard(fixture('board', 'ping'))).expect(200);
    expect(calls.find(([, message]) => message === 'delivery received')![0]).toMatchObject({ outcome: 'handled' });
  });
});

describe('logger: false', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs nothing at all, and deliveries are handled and refused as ever', async () => {
    const writes = jest.spyOn(process.stdout, 'write');
    const logged: unknown[] = [];
    for (const level of ['info', 'warn', 'error', 'debug', 'log'] as const)
      jest.spyOn(console, level).mockImplementation((...a: unknown[]) => void logged.push(a));
    const handled: string[] = [];
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: false }).on('task.created', (event, ctx) => {
      ctx.log.child({ a: 1 }).info('quiet');
      handled.push(event.id);
    });
    const app = appWith(express, board);
    const event = fixture('board', 'task.created');
    await post(app, board.path, signBoard(event)).expect(200);
    await post(app, board.path, signBoard(event, { secret: 'wrong-secret-0123456789abcdef' })).expect(401);
    await board.close();
    expect(handled).toEqual([event.id]);
    expect(logged).toEqual([]);
    expect(writes.mock.calls.filter(([chunk]) => String(chunk).includes('delivery'))).toEqual([]);
  });
});
