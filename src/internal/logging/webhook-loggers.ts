import pino, { type Logger } from 'pino';
import { REDACT_PATHS, lineScrub, redactingLogOptions } from './log-redaction';
import {
  DeferredLogger,
  LoggerOnFirstLine,
  SILENT_LOGGER,
  SinkLogger,
  consoleJsonSink,
  guarded,
  isLoggerLike,
  isPinoLogger,
  loggerSink,
  type LoggerLike,
  type WebhookLogger,
} from './logger';
import { kindOf } from '../checks/option-table';

/** What the `logger` option takes: a pino logger, any object with info/warn/error, or false for none. */
export type LoggerOption = Logger | LoggerLike | false;

/** A webhook's loggers, made once at setup from its `logger` option. */
export interface WebhookLoggers {
  /** Every line the library logs but the one below, scrubbed of secrets and credentials. */
  readonly logger: WebhookLogger;
  /**
   * The one line per accepted delivery. Its fields are the library's own (a canonical id, the kind
   * of a verified delivery, numbers), so nothing in it needs scrubbing, and it is the hot path.
   */
  readonly lineLogger: WebhookLogger;
  /** Writes what is pending; resolves when written, or at once for a logger that cannot say. */
  flush(): Promise<void>;
}

/**
 * Lines are gathered and written by the event loop in batches (at 4 KiB, and at least every 250 ms),
 * never with a blocking write: a slow reader of stdout (a pipe, a log shipper) must not stall
 * deliveries. pino writes what is pending when the process exits, also after an uncaught exception;
 * `close()` writes it too. A SIGKILL loses at most the last 250 ms of lines.
 */
export const LOG_BATCH = { minLength: 4096, periodicFlush: 250 } as const;

let defaultLogger: DeferredLogger | LoggerLike | undefined;

/**
 * The logger of a webhook without the `logger` option, one per process: pino to stdout where there
 * is one (Node, Bun), loaded after its first line; elsewhere (Deno, Workers, Vercel Edge) JSON lines
 * of the same shape through the console. On Deno, pino reads the host name and the environment,
 * which need `--allow-sys` and `--allow-env`; the console needs no permission.
 */
export function fallbackLogger(): DeferredLogger | LoggerLike {
  if (defaultLogger !== undefined) return defaultLogger;
  const stdout = (globalThis as { process?: { stdout?: { write?: unknown } } }).process?.stdout;
  const deno = typeof (globalThis as { Deno?: unknown }).Deno === 'object';
  defaultLogger = !deno && typeof stdout?.write === 'function' ? new LoggerOnFirstLine(() => pinoTo(1)).root() : CONSOLE_DEFAULT;
  return defaultLogger;
}

/** pino writing to `dest` (a file descriptor or path) in batches, and how to write a batch at exit. */
export function pinoTo(dest: number | string): { logger: Logger; flushSync(): void } {
  const destination = pino.destination({ dest, sync: false, ...(inWorkers() ? {} : LOG_BATCH) });
  const flushSync = () => {
    try {
      destination.flushSync();
    } catch {
      // Nothing written yet, or the file already closed.
    }
  };
  return { logger: pino({ name: 'svc-webhooks' }, destination), flushSync };
}

const CONSOLE_DEFAULT: LoggerLike = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Whether this runs on Cloudflare Workers (with `nodejs_compat` or without), by the user agent they
 * document. Workers keep no process between requests to write a batch later: there each line is
 * written as soon as it is logged.
 */
export function inWorkers(): boolean {
  return (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';
}

/** The `logger` option, checked: a TypeError names what it got and what it takes. */
export function checkLoggerOption(value: unknown, name: string): LoggerOption | undefined {
  if (value === undefined || value === false || isPinoLogger(value) || isLoggerLike(value)) return value as LoggerOption | undefined;
  throw new TypeError(
    `svc-webhooks: \`${name}\` must be a pino logger, an object with info, warn and error methods (console, winston, bunyan), or false for none; got ${kindOf(value)}`,
  );
}

/** The loggers of one webhook: `secrets` are its configured secret values, dropped from every line. */
export function webhookLoggers(option: LoggerOption | undefined, webhook: 'board' | 'bot', secrets: readonly string[]): WebhookLoggers {
  if (option === false) return { logger: SILENT_LOGGER, lineLogger: SILENT_LOGGER, flush: () => Promise.resolve() };
  const parent = option ?? fallbackLogger();
  if (parent instanceof DeferredLogger || isPinoLogger(parent)) {
    // The default logger has pino's child() and flush() before pino is loaded.
    const pinoParent = parent as Logger;
    return {
      logger: guarded(pinoParent.child({ webhook }, { redact: REDACT_PATHS, ...redactingLogOptions(secrets) })),
      lineLogger: guarded(pinoParent.child({ webhook })),
      flush: () => flushPino(pinoParent),
    };
  }
  const sink = parent === CONSOLE_DEFAULT ? consoleJsonSink() : loggerSink(parent as LoggerLike);
  const logger = guarded(new SinkLogger(sink, lineScrub(secrets), { webhook }));
  return { logger, lineLogger: logger, flush: () => Promise.resolve() };
}

function flushPino(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush(() => resolve());
    } catch {
      resolve();
    }
  });
}

/**
 * A scrubbed logger for a part of the library that is not one webhook (the webhook watcher): every
 * line carries `bindings` and is scrubbed of `secrets`, credentials and tokens, as a webhook's are.
 */
export function scrubbedLogger(option: LoggerOption | undefined, bindings: Record<string, unknown>, secrets: readonly string[]): WebhookLogger {
  if (option === false) return SILENT_LOGGER;
  const parent = option ?? fallbackLogger();
  if (parent instanceof DeferredLogger || isPinoLogger(parent))
    return guarded((parent as Logger).child(bindings, { redact: REDACT_PATHS, ...redactingLogOptions(secrets) }));
  const sink = parent === CONSOLE_DEFAULT ? consoleJsonSink() : loggerSink(parent as LoggerLike);
  return guarded(new SinkLogger(sink, lineScrub(secrets), bindings));
}
