import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { DeferredLogger, SILENT_LOGGER, isPinoLogger } from '../../../../src/internal/logging/logger';
import { LOG_BATCH, fallbackLogger, pinoTo, scrubbedLogger, webhookLoggers } from '../../../../src/internal/logging/webhook-loggers';

const SECRET = 'the-configured-secret-0123456789';

function consoleLike() {
  return { info: jest.fn(), warn: jest.fn(), error: jest.fn() };
}

function pinoLines() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

describe('scrubbedLogger: a logger for a part of the library that is not one webhook (the watcher)', () => {
  it('is silent with logger: false', () => {
    expect(scrubbedLogger(false, { part: 'watcher' }, [SECRET])).toBe(SILENT_LOGGER);
  });

  it('gives a console-like logger its bindings on every line, and scrubs the secrets from it', () => {
    const target = consoleLike();
    scrubbedLogger(target, { part: 'watcher' }, [SECRET]).warn({ detail: `got ${SECRET}` }, `svc said ${SECRET}`);
    expect(target.warn).toHaveBeenCalledTimes(1);
    const [message, fields] = target.warn.mock.calls[0] as [string, Record<string, unknown>];
    expect(fields).toMatchObject({ part: 'watcher' });
    expect(JSON.stringify([message, fields])).not.toContain(SECRET);
  });

  it('makes a pino logger a child with the bindings, which drops the secrets too', () => {
    const { logger, lines } = pinoLines();
    scrubbedLogger(logger, { part: 'watcher' }, [SECRET]).warn({ detail: `got ${SECRET}` }, `svc said ${SECRET}`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ part: 'watcher', level: 40 });
    expect(JSON.stringify(lines[0])).not.toContain(SECRET);
  });
});

describe('webhookLoggers', () => {
  it('logs nothing with logger: false, and its flush resolves', async () => {
    const loggers = webhookLoggers(false, 'board', [SECRET]);
    expect(loggers.logger).toBe(SILENT_LOGGER);
    expect(loggers.lineLogger).toBe(SILENT_LOGGER);
    await expect(loggers.flush()).resolves.toBeUndefined();
  });

  it('binds the webhook on a console-like logger, scrubbing every line', () => {
    const target = consoleLike();
    const { logger, lineLogger } = webhookLoggers(target, 'bot', [SECRET]);
    expect(lineLogger).toBe(logger);
    logger.error({ err: new Error(`handler quoted ${SECRET}`) }, 'failed');
    const [, fields] = target.error.mock.calls[0] as [string, Record<string, unknown>];
    expect(fields).toMatchObject({ webhook: 'bot' });
    expect(JSON.stringify(fields)).not.toContain(SECRET);
  });

  it('binds the webhook on a pino logger, scrubs its lines, and flushes through pino', async () => {
    const { logger: parent, lines } = pinoLines();
    const flush = jest.spyOn(parent, 'flush');
    const { logger, lineLogger, flush: flushAll } = webhookLoggers(parent, 'board', [SECRET]);
    logger.warn(`a line with ${SECRET}`);
    lineLogger.info({ deliveryId: 'd' }, 'delivery received');
    expect(lines.map((l) => l.webhook)).toEqual(['board', 'board']);
    expect(JSON.stringify(lines)).not.toContain(SECRET);
    await flushAll();
    expect(flush).toHaveBeenCalled();
  });

  it('resolves its flush at once for a console-like logger, which has nothing pending', async () => {
    await expect(webhookLoggers(consoleLike(), 'bot', []).flush()).resolves.toBeUndefined();
  });

  it('resolves its flush when pino cannot flush', async () => {
    const { logger: parent } = pinoLines();
    jest.spyOn(parent, 'flush').mockImplementation(() => {
      throw new Error('no flush here');
    });
    await expect(webhookLoggers(parent, 'board', []).flush()).resolves.toBeUndefined();
  });
});

describe('the default logger on Node', () => {
  it('is one logger for the whole process, made without loading pino until it logs', () => {
    const logger = fallbackLogger();
    expect(logger).toBeInstanceOf(DeferredLogger);
    expect(fallbackLogger()).toBe(logger);
  });

  it('writes pino lines in batches: nothing before a batch fills or the process exits, then every line', async () => {
    // The batch's periodic flush runs on a clock the test holds still; the file opens and is written
    // by real I/O, which the test waits for a turn of the event loop at a time.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date', 'performance', 'hrtime'] });
    const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-log-'));
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const until = async (done: () => boolean, act: () => void = () => undefined) => {
      for (const deadline = Date.now() + 5000; !done() && Date.now() < deadline; await turn()) act();
    };
    try {
      const file = join(dir, 'out.log');
      const lines = () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
      const { logger, flushSync } = pinoTo(file);
      logger.info({ deliveryId: 'd' }, 'a line');
      await until(() => existsSync(file));
      for (let i = 0; i < 20; i++) await turn();
      expect(lines()).toEqual([]);
      // The file may still be opening on a busy machine: a flush before it is open writes nothing yet.
      await until(() => lines().length > 0, flushSync);
      expect(lines().map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ level: 30, name: 'svc-webhooks', deliveryId: 'd', msg: 'a line' })]);
      logger.info('x'.repeat(LOG_BATCH.minLength));
      await until(() => lines().length === 2);
      expect(lines()).toHaveLength(2);
    } finally {
      jest.useRealTimers();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the default logger on Node: pino', () => {
  it('is loaded when first needed, a pino logger named svc-webhooks', () => {
    jest.isolateModules(() => {
      const fresh = require('../../../../src/internal/logging/webhook-loggers') as typeof import('../../../../src/internal/logging/webhook-loggers');
      const loaded = (fresh.fallbackLogger() as DeferredLogger).now();
      expect(isPinoLogger(loaded)).toBe(true);
      expect(loaded.bindings()).toMatchObject({ name: 'svc-webhooks' });
    });
  });

  it("never writes on the caller's turn: even a full batch is written once the event loop turns", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-log-'));
    try {
      const file = join(dir, 'out.log');
      const written = () => (existsSync(file) ? readFileSync(file, 'utf8') : '');
      const { logger } = pinoTo(file);
      logger.info('x'.repeat(LOG_BATCH.minLength));
      expect(written()).toBe('');
      // The event loop turns; on a busy machine the file may take a while to open.
      for (const deadline = Date.now() + 5000; written() === '' && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(written().split('\n').filter(Boolean)).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the default logger where there is no stdout (Workers, Vercel Edge)', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each<[string, unknown]>([
    ['no process', undefined],
    ['a process without stdout', {}],
  ])('writes pino-shaped JSON lines through the console where there is %s', (_what, stand) => {
    const info = jest.spyOn(console, 'info').mockImplementation(() => undefined);
    jest.isolateModules(() => {
      const fresh = require('../../../../src/internal/logging/webhook-loggers') as typeof import('../../../../src/internal/logging/webhook-loggers');
      const real = Object.getOwnPropertyDescriptor(globalThis, 'process')!;
      Object.defineProperty(globalThis, 'process', { value: stand, configurable: true, writable: true });
      try {
        // The default logger is chosen once, when it is first asked for.
        fresh.fallbackLogger();
      } finally {
        Object.defineProperty(globalThis, 'process', real);
      }
      fresh.webhookLoggers(undefined, 'bot', []).logger.info({ deliveryId: 'd' }, 'hello');
    });
    expect(info).toHaveBeenCalledTimes(1);
    expect(JSON.parse(info.mock.calls[0]![0] as string)).toMatchObject({ level: 30, name: 'svc-webhooks', webhook: 'bot', msg: 'hello' });
  });
});

describe('the default logger on Deno', () => {
  afterEach(() => {
    delete (globalThis as { Deno?: unknown }).Deno;
    jest.restoreAllMocks();
  });

  it('writes pino-shaped JSON lines through the console, so it needs no --allow-sys or --allow-env (pino reads both)', () => {
    (globalThis as { Deno?: unknown }).Deno = { version: { deno: '2' } };
    const info = jest.spyOn(console, 'info').mockImplementation(() => undefined);
    jest.isolateModules(() => {
      // A fresh module: the default logger is made once per process.
      const fresh = require('../../../../src/internal/logging/webhook-loggers') as typeof import('../../../../src/internal/logging/webhook-loggers');
      fresh.webhookLoggers(undefined, 'board', []).logger.info({ deliveryId: 'd' }, 'hello');
    });
    expect(info).toHaveBeenCalledTimes(1);
    expect(JSON.parse(info.mock.calls[0]![0] as string)).toMatchObject({ level: 30, name: 'svc-webhooks', webhook: 'board', deliveryId: 'd', msg: 'hello' });
  });

  it("writes the watcher's scrubbed lines the same way, with its bindings", () => {
    (globalThis as { Deno?: unknown }).Deno = { version: { deno: '2' } };
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    jest.isolateModules(() => {
      const fresh = require('../../../../src/internal/logging/webhook-loggers') as typeof import('../../../../src/internal/logging/webhook-loggers');
      fresh.scrubbedLogger(undefined, { part: 'watcher' }, [SECRET]).warn({ detail: SECRET }, 'svc is unhealthy');
    });
    expect(warn).toHaveBeenCalledTimes(1);
    const line = JSON.parse(warn.mock.calls[0]![0] as string) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 40, name: 'svc-webhooks', part: 'watcher', msg: 'svc is unhealthy' });
    expect(JSON.stringify(line)).not.toContain(SECRET);
  });
});
