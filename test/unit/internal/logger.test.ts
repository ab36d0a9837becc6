import pino from 'pino';
import { SinkLogger, consoleJsonSink, isLoggerLike, isPinoLogger, loggerSink, type LineScrub } from '../../../src/internal/logger';

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
