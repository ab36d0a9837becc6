import type { ChildLoggerOptions, Logger } from 'pino';

/**
 * The logger the library logs through and handlers get as `ctx.log`: pino's call shapes, so a pino
 * logger is one as it is. Any other logger (console, winston, bunyan) is wrapped: its lines go
 * through the same scrub as pino's (`scrubLine`), and child loggers keep their fields.
 */
export interface WebhookLogger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  /** A logger whose every line carries `bindings` too. */
  child(bindings: Record<string, unknown>): WebhookLogger;
}

/** A log call: fields first and an optional message (pino's order), or a message alone. */
export interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

/**
 * What the `logger` option takes besides a pino logger: any object with `info`, `warn` and `error`
 * (and optionally `debug`), such as `console`, a winston or a bunyan logger.
 */
export interface LoggerLike {
  info(...args: never[]): unknown;
  warn(...args: never[]): unknown;
  error(...args: never[]): unknown;
  debug?(...args: never[]): unknown;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Writes one scrubbed line: its level, its fields (bindings included) and its message. */
export type LineSink = (level: LogLevel, fields: Record<string, unknown>, message: string | undefined) => void;

/** Scrubs one line's fields and message of secrets; the identity when there is nothing to drop. */
export interface LineScrub {
  fields(fields: Record<string, unknown>): Record<string, unknown>;
  message(message: string): string;
}

/** A logger over a LineSink: bindings are merged into each line, and every line is scrubbed. */
export class SinkLogger implements WebhookLogger {
  constructor(
    private readonly sink: LineSink,
    private readonly scrub: LineScrub,
    private readonly bindings: Readonly<Record<string, unknown>> = {},
  ) {}

  readonly debug: LogFn = (a: object | string, b?: string) => this.write('debug', a, b);
  readonly info: LogFn = (a: object | string, b?: string) => this.write('info', a, b);
  readonly warn: LogFn = (a: object | string, b?: string) => this.write('warn', a, b);
  readonly error: LogFn = (a: object | string, b?: string) => this.write('error', a, b);

  child(bindings: Record<string, unknown>): SinkLogger {
    return new SinkLogger(this.sink, this.scrub, { ...this.bindings, ...bindings });
  }

  /** The same logger with another scrub (one that also drops a board's secrets). */
  scrubbing(scrub: (inner: LineScrub) => LineScrub): SinkLogger {
    return new SinkLogger(this.sink, scrub(this.scrub), this.bindings);
  }

  private write(level: LogLevel, first: object | string, second: string | undefined): void {
    const fields = typeof first === 'string' ? { ...this.bindings } : { ...this.bindings, ...fieldsOf(first) };
    const message = typeof first === 'string' ? first : second;
    this.sink(level, this.scrub.fields(fields), message === undefined ? undefined : this.scrub.message(String(message)));
  }
}

/** An Error logged as the line's fields object is logged under `err`, as pino does. */
function fieldsOf(value: object): Record<string, unknown> {
  return value instanceof Error ? { err: value } : (value as Record<string, unknown>);
}

/** A line for another logger: `info(message, fields)` (console, winston), or fields first (bunyan). */
export function loggerSink(target: LoggerLike): LineSink {
  // bunyan takes pino's order, fields first: it has the streams pino lacks.
  const fieldsFirst = Array.isArray((target as { streams?: unknown }).streams);
  return (level, fields, message) => {
    const method = (target as unknown as Record<string, unknown>)[level];
    if (typeof method !== 'function') return; // a logger without `debug`
    const call = method as (...args: unknown[]) => unknown;
    if (fieldsFirst) call.call(target, fields, message ?? '');
    else call.call(target, message ?? '', fields);
  };
}

/** pino's numbers for the levels: a line through the console reads as the default pino line does. */
const PINO_LEVELS: Readonly<Record<LogLevel, number>> = { debug: 20, info: 30, warn: 40, error: 50 };

/**
 * JSON lines through the runtime's console, where no stdout stream exists to give pino (Workers,
 * Vercel Edge, Deno Deploy) or pino would need permissions (Deno): their log collectors read one
 * JSON object per line. Each line has the default pino line's shape: `level` as pino's number,
 * `time`, `name`, the fields, `msg`.
 */
export function consoleJsonSink(): LineSink {
  const out = globalThis.console;
  return (level, fields, message) => {
    const head = { level: PINO_LEVELS[level], time: Date.now(), name: 'svc-webhooks' };
    let line: string;
    try {
      line = JSON.stringify({ ...head, ...fields, ...(message === undefined ? {} : { msg: message }) });
    } catch {
      line = JSON.stringify({ ...head, msg: message, note: 'the fields of this line could not be written as JSON' });
    }
    // Stryker disable next-line ConditionalExpression,StringLiteral: either way the level names its method (test/mutation/EQUIVALENT.internal.md)
    out[level === 'debug' ? 'debug' : level](line);
  };
}

const NOTHING = (): void => undefined;

/**
 * A user's logger behind one guard: a line it throws on is lost, never a delivery's answer, a
 * watcher's polling or the process (a `warn` thrown from a response's `finish` event would be an
 * uncaught exception). Made once at setup around the webhook's or the watcher's logger; its
 * children are guarded too.
 */
export class GuardedLogger implements WebhookLogger {
  constructor(readonly inner: WebhookLogger) {}

  // Every argument passes: pino interpolates `%s` from those after the message.
  readonly debug: LogFn = (...args: unknown[]) => this.call('debug', args);
  readonly info: LogFn = (...args: unknown[]) => this.call('info', args);
  readonly warn: LogFn = (...args: unknown[]) => this.call('warn', args);
  readonly error: LogFn = (...args: unknown[]) => this.call('error', args);

  child(bindings: Record<string, unknown>): WebhookLogger {
    try {
      return new GuardedLogger(this.inner.child(bindings));
    } catch {
      return this;
    }
  }

  private call(level: LogLevel, args: unknown[]): void {
    try {
      Reflect.apply(this.inner[level], this.inner, args);
    } catch {
      // The logger failed: there is nowhere left to report that, and the line's work goes on.
    }
  }
}

/** `logger` behind the guard (once: a guarded or the silent logger is returned as it is). */
export function guarded(logger: WebhookLogger): WebhookLogger {
  return logger instanceof GuardedLogger || logger === SILENT_LOGGER ? logger : new GuardedLogger(logger);
}

/**
 * Loads a logger when the event loop is next free after the first line logged through it, not when
 * it is set up: the default logger's pino, whose load (about 25 ms) would otherwise delay the first
 * delivery's answer. Lines logged before then wait, in order, and are written then (after the
 * answer that logged them) or when the process exits; their `time` is when they are written. It
 * needs a Node process (Node, Bun), as pino's destination does.
 */
export class LoggerOnFirstLine {
  private logger: Logger | undefined;
  private readonly waiting: Array<() => void> = [];

  /** `make` loads and builds the logger; `flushSync` writes what it holds before the process exits. */
  constructor(private readonly make: () => { logger: Logger; flushSync(): void }) {}

  /** The root logger's face: its children are loaded with it. */
  root(): DeferredLogger {
    return new DeferredLogger(this, (root) => root);
  }

  /** The logger, loaded now if it is not yet: every waiting line is written first. */
  load(): Logger {
    if (this.logger === undefined) {
      const made = this.make();
      this.logger = made.logger;
      this.flushSync = made.flushSync;
      process.off('exit', this.atExit);
      for (const line of this.waiting.splice(0)) line();
    }
    return this.logger;
  }

  get loaded(): boolean {
    return this.logger !== undefined;
  }

  wait(line: () => void): void {
    if (this.waiting.push(line) > 1) return;
    setImmediate(() => this.load());
    process.once('exit', this.atExit);
  }

  private flushSync = (): void => undefined;

  /** An exit before the loop turned (process.exit(), an uncaught exception) still writes the lines. */
  private readonly atExit = (): void => {
    this.load();
    this.flushSync();
  };
}

/** A logger of a LoggerOnFirstLine: pino's calls, made on the loaded logger or kept until it loads. */
export class DeferredLogger implements WebhookLogger {
  private logger: Logger | undefined;

  constructor(
    private readonly loader: LoggerOnFirstLine,
    private readonly make: (root: Logger) => Logger,
  ) {}

  readonly debug: LogFn = (...args: unknown[]) => this.line('debug', args);
  readonly info: LogFn = (...args: unknown[]) => this.line('info', args);
  readonly warn: LogFn = (...args: unknown[]) => this.line('warn', args);
  readonly error: LogFn = (...args: unknown[]) => this.line('error', args);

  child(bindings: Record<string, unknown>, options?: ChildLoggerOptions): DeferredLogger {
    return new DeferredLogger(this.loader, () => this.now().child(bindings, options));
  }

  flush(done?: (err?: Error) => void): void {
    this.now().flush(done);
  }

  /** The loaded logger (loading it when it is not yet). */
  now(): Logger {
    return (this.logger ??= this.make(this.loader.load()));
  }

  private line(level: LogLevel, args: unknown[]): void {
    if (this.loader.loaded) this.write(level, args);
    else
      this.loader.wait(() => {
        try {
          this.write(level, args);
        } catch {
          // As the guard does: a line that fails is lost, not the lines after it.
        }
      });
  }

  private write(level: LogLevel, args: unknown[]): void {
    const logger = this.now();
    Reflect.apply(logger[level], logger, args);
  }
}

/** `logger: false`: nothing is logged. */
export const SILENT_LOGGER: WebhookLogger = {
  debug: NOTHING,
  info: NOTHING,
  warn: NOTHING,
  error: NOTHING,
  child: () => SILENT_LOGGER,
};

/** A pino logger: the fast path, whose own redaction options do the scrub. */
export function isPinoLogger(value: unknown): boolean {
  const candidate = value as { levels?: { values?: unknown }; child?: unknown; flush?: unknown; bindings?: unknown } | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.levels?.values === 'object' &&
    typeof candidate.child === 'function' &&
    typeof candidate.flush === 'function' &&
    typeof candidate.bindings === 'function'
  );
}

/** Whether `value` can be the `logger` option's other kind: info, warn and error are functions. */
export function isLoggerLike(value: unknown): value is LoggerLike {
  const candidate = value as Partial<Record<LogLevel, unknown>> | null;
  return (
    (typeof candidate === 'object' || typeof candidate === 'function') &&
    candidate !== null &&
    ['info', 'warn', 'error'].every((m) => typeof candidate[m as LogLevel] === 'function')
  );
}
