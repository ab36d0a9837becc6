import { Writable } from 'node:stream';
import { format } from 'node:util';
import winston from 'winston';
import { svcBoardWebhook, type BoardWebhookMiddleware, type LoggerLike } from '../../src';
import { memoryLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, fixture, signBoard } from '../support/sign';
import express from 'express';

const BYTES = Buffer.byteLength(BOARD_SECRET);

/**
 * A handler that logs the secret and the delivery's signature inside values whose content is not in
 * own fields: Map, Set, symbol-keyed fields, Buffer, Uint8Array, Fetch Headers and Request.
 */
function logsHeldValues(logger: LoggerLike | ReturnType<typeof memoryLogger>['logger']): BoardWebhookMiddleware {
  return svcBoardWebhook({ secret: BOARD_SECRET, logger }).on('task.created', (_event, ctx) => {
    const signature = String(ctx.req!.headers['x-svc-signature']);
    ctx.log.info(
      {
        map: new Map<unknown, unknown>([
          ['secret', BOARD_SECRET],
          ['note', `signed ${signature}`],
          [1, { deep: BOARD_SECRET }],
        ]),
        set: new Set([BOARD_SECRET, signature]),
        [Symbol('config')]: { secret: BOARD_SECRET },
        buffer: Buffer.from(BOARD_SECRET),
        bytes: new TextEncoder().encode(BOARD_SECRET),
        headers: new Headers({ 'x-svc-signature': signature, authorization: `Bearer ${BOARD_SECRET}`, 'x-note': `with ${BOARD_SECRET}` }),
        request: new Request(`https://example.com/hook?key=${BOARD_SECRET}`, { headers: { 'x-svc-signature': signature } }),
      },
      'held values',
    );
  });
}

async function deliver(board: BoardWebhookMiddleware): Promise<string> {
  const signed = signBoard(fixture('board', 'task.created'));
  await post(express().use(board), board.path, signed).expect(200);
  await board.close();
  return signed.headers['X-Svc-Signature']!.slice('v1='.length);
}

function expectNothingSecret(output: string, signatureHex: string): void {
  expect(output).toContain('held values');
  expect(output).not.toContain(BOARD_SECRET);
  expect(output).not.toContain(signatureHex);
  // Neither as the bytes console shows of a Buffer or a Uint8Array.
  expect(output).not.toContain(Buffer.from(BOARD_SECRET).toString('hex').slice(0, 8).match(/../g)!.join(' '));
  expect(output.replace(/\s/g, '')).not.toContain([...Buffer.from(BOARD_SECRET).subarray(0, 4)].join(','));
}

describe('values a console or winston logger would show from their internal slots', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logger: console: scrubbed as fields, bytes shown by their size, symbol keys dropped', async () => {
    const printed: string[] = [];
    const fields: Array<Record<string, unknown>> = [];
    for (const level of ['info', 'warn', 'error', 'debug'] as const) {
      jest.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        const [message, line] = args;
        printed.push(format(message, line)); // what Node's console prints for these arguments
        fields.push(line as Record<string, unknown>);
      });
    }
    const signatureHex = await deliver(logsHeldValues(console));
    expectNothingSecret(printed.join('\n'), signatureHex);
    const line = fields.find((f) => f !== undefined && 'map' in f)!;
    expect(line).toMatchObject({
      map: { secret: '[Redacted]', note: 'signed v1=[Redacted]', 1: { deep: '[Redacted]' } },
      set: ['[Redacted]', 'v1=[Redacted]'],
      buffer: `[Buffer: ${BYTES} bytes]`,
      bytes: `[Uint8Array: ${BYTES} bytes]`,
      headers: { 'x-svc-signature': '[Redacted]', authorization: '[Redacted]', 'x-note': 'with [Redacted]' },
      request: { method: 'GET', url: 'https://example.com/hook?key=[Redacted]', headers: { 'x-svc-signature': '[Redacted]' } },
    });
    expect(Object.getOwnPropertySymbols(line)).toEqual([]);
  });

  it.each([
    ['json', winston.format.json()],
    ['prettyPrint', winston.format.prettyPrint()],
  ])('logger: winston with format.%s: the same', async (_name, winstonFormat) => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = winston.createLogger({ level: 'debug', format: winstonFormat, transports: [new winston.transports.Stream({ stream })] });
    const signatureHex = await deliver(logsHeldValues(logger));
    expectNothingSecret(lines.join('\n'), signatureHex);
  });

  it('a pino logger: the same scrub applies', async () => {
    const log = memoryLogger();
    const signatureHex = await deliver(logsHeldValues(log.logger));
    expectNothingSecret(log.text(), signatureHex);
    expect(log.lines.find((l) => l.msg === 'held values')).toMatchObject({ buffer: `[Buffer: ${BYTES} bytes]`, map: { secret: '[Redacted]' } });
  });
});

describe('logger: console, lines without a value', () => {
  afterEach(() => jest.restoreAllMocks());

  /** The paths of fields whose value is undefined, at any depth. */
  function undefinedFields(value: unknown, path = ''): string[] {
    if (typeof value !== 'object' || value === null) return [];
    return Object.entries(value).flatMap(([k, v]) => (v === undefined ? [`${path}${k}`] : undefinedFields(v, `${path}${k}.`)));
  }

  it('prints no field as `undefined`: a refusal before the delivery is known, a handler failure, a handler line', async () => {
    const lines: Array<Record<string, unknown>> = [];
    for (const level of ['info', 'warn', 'error', 'debug'] as const) {
      jest.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args[1] as Record<string, unknown>));
    }
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: console })
      .on('task.created', (_event, ctx) => ctx.log.info({ note: undefined, nested: { gone: undefined, kept: 1 } }, 'a handler line'))
      .on('task.updated', () => {
        throw new Error('the handler failed');
      });
    const app = express().use(board);
    await post(app, board.path, { body: '{}', headers: { 'Content-Type': 'application/json' } }).expect(401);
    await post(app, board.path, signBoard(fixture('board', 'task.created'))).expect(200);
    await post(app, board.path, signBoard(fixture('board', 'task.updated'))).expect(500);
    await board.close();
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(lines.flatMap((fields) => undefinedFields(fields))).toEqual([]);
    expect(lines.find((fields) => fields?.nested !== undefined)).toMatchObject({ nested: { kept: 1 } });
  });
});
