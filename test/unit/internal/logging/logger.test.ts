import pino from 'pino';
import { childDropping } from '../../../../src/internal/logging/log-redaction';
import {
  GuardedLogger,
  LoggerOnFirstLine,
  SinkLogger,
  consoleJsonSink,
  isLoggerLike,
  isPinoLogger,
  loggerSink,
  type LineScrub,
} from '../../../../src/internal/logging/logger';
import { memoryLogger } from '../../../support/apps';

const KEEP: LineScrub = { fields: (f) => f, message: (m) => m };

describe('consoleJsonSink: JSON lines through the console (Workers, Vercel Edge)', () => {
  let spies: Record<'debug' | 'info' | 'warn' | 'error', jest.SpyInstance>;
  beforeEach(() => {
    spies = {
      debug: jest.spyOn(console, 'debug').mockImplementation(() => undefined),
      info: jest.spyOn(console, 'info').mockImplementation(() => undefined),
      warn: jest.spyOn(console, 'warn').mockImplementation(() => undefined),
      error: jest.spyOn(console, 'error').mockImplementation(() => undefined),
    };
  });
  afterEach(() => jest.restoreAllMocks());

  it.each(['debug', 'info', 'warn', 'error'] as const)('writes a %s line with the console method of its level, shaped as the default pino line', (level) => {
    consoleJsonSink()(level, { deliveryId: 'd' }, 'hello');
    expect(spies[level]).toHaveBeenCalledTimes(1);
    const line = JSON.parse(spies[level].mock.calls[0][0] as string) as Record<string, unknown>;
    // pino's number for the level and its name, as the Node build's default logger writes them.
    expect(line).toMatchObject({ level: pino.levels.values[level], name: 'svc-webhooks', deliveryId: 'd', msg: 'hello' });
    expect(Object.keys(line).slice(0, 3)).toEqual(['level', 'time', 'name']);
    expect(typeof line.time).toBe('number');
  });

  it('has no msg when there is no message', () => {
    consoleJsonSink()('info', { a: 1 }, undefined);
    expect(JSON.parse(spies.info.mock.calls[0][0] as string)).not.toHaveProperty('msg');
  });

  it('keeps a field named msg when the line has no message, as pino does', () => {
    consoleJsonSink()('info', { msg: 'from the fields' }, undefined);
    expect(JSON.parse(spies.info.mock.calls[0][0] as string)).toMatchObject({ msg: 'from the fields' });
  });

  it('still writes a line, with a note, when the fields cannot be written as JSON', () => {
    consoleJsonSink()('warn', { big: BigInt(1) }, 'hello');
    const line = JSON.parse(spies.warn.mock.calls[0][0] as string) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 40, msg: 'hello', note: 'the fields of this line could not be written as JSON' });
    expect(line).not.toHaveProperty('big');
  });
});

describe('SinkLogger', () => {
  it('merges its bindings into each line, under the fields, and logs at each level', () => {
    const sink = jest.fn();
    const logger = new SinkLogger(sink, KEEP, { webhook: 'board' }).child({ deliveryId: 'd' });
    logger.debug({ a: 1 }, 'm');
    logger.info('only a message');
    expect(sink.mock.calls).toEqual([
      ['debug', { webhook: 'board', deliveryId: 'd', a: 1 }, 'm'],
      ['info', { webhook: 'board', deliveryId: 'd' }, 'only a message'],
    ]);
  });

  it('logs an Error given as the fields under err', () => {
    const sink = jest.fn();
    const err = new Error('boom');
    new SinkLogger(sink, KEEP).error(err, 'failed');
    expect(sink).toHaveBeenCalledWith('error', { err }, 'failed');
  });

  it('scrubs through the scrub it is given, and scrubbing() wraps that scrub', () => {
    const sink = jest.fn();
    const upper: LineScrub = { fields: (f) => ({ ...f, scrubbed: true }), message: (m) => m.toUpperCase() };
    const logger = new SinkLogger(sink, upper).scrubbing((inner) => ({ fields: inner.fields, message: (m) => `${inner.message(m)}!` }));
    logger.warn({ a: 1 }, 'careful');
    expect(sink).toHaveBeenCalledWith('warn', { a: 1, scrubbed: true }, 'CAREFUL!');
  });
});

describe('GuardedLogger: a user logger behind one guard', () => {
  it('gives itself for a child when its logger cannot make one, so the lines are still written', () => {
    const info = jest.fn();
    const guarded = new GuardedLogger({
      ...new SinkLogger(info, KEEP),
      child: () => {
        throw new Error('no children here');
      },
    });
    const child = guarded.child({ deliveryId: 'd' });
    expect(child).toBe(guarded);
    child.info('still written');
    expect(info).toHaveBeenCalledWith('info', {}, 'still written');
  });
});

describe('loggerSink: lines for another logger', () => {
  it('calls message first, then fields (console, winston)', () => {
    const info = jest.fn();
    loggerSink({ info, warn: jest.fn(), error: jest.fn() })('info', { a: 1 }, 'm');
    expect(info).toHaveBeenCalledWith('m', { a: 1 });
  });

  it('calls fields first for bunyan (a logger with streams), with an empty message when there is none', () => {
    const info = jest.fn();
    loggerSink({ info, warn: jest.fn(), error: jest.fn(), streams: [] } as never)('info', { a: 1 }, undefined);
    expect(info).toHaveBeenCalledWith({ a: 1 }, '');
  });

  it('skips a level the logger lacks', () => {
    const target = { info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    expect(() => loggerSink(target)('debug', {}, 'm')).not.toThrow();
    expect(target.info).not.toHaveBeenCalled();
  });
});

describe('which loggers the logger option takes', () => {
  const pinoLike = () => ({
    levels: { values: {} },
    child: () => undefined,
    flush: () => undefined,
    bindings: () => ({}),
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
  });

  it('knows a pino logger by its levels, child, flush and bindings', () => {
    expect(isPinoLogger(pino({ enabled: false }))).toBe(true);
    expect(isPinoLogger(pinoLike())).toBe(true);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['console', console],
    ['a string', 'pino'],
    ['a function', () => undefined],
    ['one without levels', { ...pinoLike(), levels: undefined }],
    ['one without child', { ...pinoLike(), child: 1 }],
    ['one without flush', { ...pinoLike(), flush: undefined }],
    ['one without bindings', { ...pinoLike(), bindings: 'b' }],
    ['a function with their fields', Object.assign(() => undefined, pinoLike())],
  ])('does not take %s for a pino logger', (_what, candidate) => {
    expect(isPinoLogger(candidate)).toBe(false);
  });

  it('takes anything with info, warn and error as a logger, a function with them too', () => {
    expect(isLoggerLike(console)).toBe(true);
    expect(isLoggerLike(Object.assign(() => undefined, { info: () => undefined, warn: () => undefined, error: () => undefined }))).toBe(true);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'console'],
    ['an object without error', { info: () => undefined, warn: () => undefined }],
    ['an object whose warn is not a function', { info: () => undefined, warn: true, error: () => undefined }],
    ['a function without the methods', () => undefined],
  ])('does not take %s as a logger', (_what, candidate) => {
    expect(isLoggerLike(candidate)).toBe(false);
  });
});

describe('lines without a message', () => {
  it('reach the sink with no message, not the text "undefined"', () => {
    const sink = jest.fn();
    new SinkLogger(sink, KEEP).warn({ a: 1 });
    expect(sink).toHaveBeenCalledWith('warn', { a: 1 }, undefined);
  });

  it('reach a console-like logger with an empty message', () => {
    const info = jest.fn();
    loggerSink({ info, warn: jest.fn(), error: jest.fn() })('info', { a: 1 }, undefined);
    expect(info).toHaveBeenCalledWith('', { a: 1 });
  });
});

describe('LoggerOnFirstLine: the default logger, loaded after its first line instead of at setup', () => {
  const SECRET = 'a-board-secret-0123456789abcdef';

  function loader() {
    const flushSync = jest.fn();
    // A logger whose line 'throws' throws, as a user's hook or a broken stream can.
    const hooks = {
      logMethod(this: pino.Logger, args: Parameters<pino.LogFn>, method: pino.LogFn) {
        if (args[0] === 'throws') throw new Error('this line fails');
        method.apply(this, args);
      },
    };
    const log = memoryLogger({ name: 'svc-webhooks', hooks });
    const make = jest.fn(() => ({ logger: log.logger, flushSync }));
    return { onFirstLine: new LoggerOnFirstLine(make), make, log, flushSync };
  }

  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it('makes nothing until a line is logged, and then only when the event loop turns', async () => {
    const { onFirstLine, make, log } = loader();
    const root = onFirstLine.root();
    const child = root.child({ webhook: 'board' });
    expect(make).not.toHaveBeenCalled();
    child.info({ deliveryId: 'd1' }, 'first');
    expect(make).not.toHaveBeenCalled();
    await turn();
    expect(make).toHaveBeenCalledTimes(1);
    expect(log.lines).toEqual([expect.objectContaining({ webhook: 'board', deliveryId: 'd1', msg: 'first', level: 30 })]);
  });

  it('writes the lines logged before it loaded in their order, each by its own logger, and later lines at once', async () => {
    const { onFirstLine, log, make } = loader();
    const root = onFirstLine.root();
    const board = root.child({ webhook: 'board' });
    const bot = root.child({ webhook: 'bot' });
    board.warn('one');
    bot.error({ n: 2 }, 'two');
    root.debug('three');
    // Every argument passes, as pino takes them (`%s` from those after the message).
    (board.info as (...args: unknown[]) => void)('%s interpolated', 'four');
    expect(log.lines).toHaveLength(0);
    await turn();
    expect(log.lines.map((l) => [l.msg, l.webhook, l.level])).toEqual([
      ['one', 'board', 40],
      ['two', 'bot', 50],
      ['three', undefined, 20],
      ['four interpolated', 'board', 30],
    ]);
    board.info('five');
    expect(log.lines.at(-1)).toMatchObject({ msg: 'five', webhook: 'board' });
    expect(make).toHaveBeenCalledTimes(1);
  });

  it('loads at once when flushed, writing what waits first', async () => {
    const { onFirstLine, log } = loader();
    const logger = onFirstLine.root().child({ webhook: 'board' });
    logger.info('waiting');
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    expect(log.lines.map((l) => l.msg)).toEqual(['waiting']);
  });

  it('writes the waiting lines and flushes synchronously when the process exits before the loop turns', () => {
    const { onFirstLine, log, flushSync } = loader();
    const before = process.listenerCount('exit');
    onFirstLine.root().info('before exit');
    expect(process.listenerCount('exit')).toBe(before + 1);
    process.emit('exit', 0);
    expect(log.lines.map((l) => l.msg)).toEqual(['before exit']);
    expect(flushSync).toHaveBeenCalledTimes(1);
    expect(process.listenerCount('exit')).toBe(before);
  });

  it('stops listening for the exit once loaded', async () => {
    const { onFirstLine, flushSync } = loader();
    const before = process.listenerCount('exit');
    onFirstLine.root().info('a line');
    await turn();
    expect(process.listenerCount('exit')).toBe(before);
    expect(flushSync).not.toHaveBeenCalled();
  });

  it('loses only a line that throws while waiting, not those after it', async () => {
    const { onFirstLine, log } = loader();
    const root = onFirstLine.root();
    root.info('throws');
    root.info('kept');
    await turn();
    expect(log.lines.map((l) => l.msg)).toEqual(['kept']);
  });

  it("drops a verifying board's secret from a handler's child (ctx.log) before and after it loads", async () => {
    const { onFirstLine, log } = loader();
    const root = onFirstLine.root().child({ webhook: 'board' });
    childDropping(root, { deliveryId: 'd' }, [SECRET]).info(`quoted ${SECRET}`);
    await turn();
    childDropping(root, { deliveryId: 'e' }, [SECRET]).warn({ detail: SECRET }, 'again');
    expect(log.lines.map((l) => l.deliveryId)).toEqual(['d', 'e']);
    expect(JSON.stringify(log.lines)).not.toContain(SECRET);
  });
});
