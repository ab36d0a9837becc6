import type { Logger } from 'pino';

type Formatter = (object: Record<string, unknown>) => Record<string, unknown>;

/**
 * A JSON-lines logger over `console.log`, for the runtimes where the default logger (pino on
 * stdout) cannot run yet. It applies the library's redaction (the child options' log formatter),
 * so a test can check that no secret reaches the output.
 */
export function consoleLogger(bindings: Record<string, unknown> = {}, format: Formatter = (o) => o): Logger {
  const line =
    (level: string) =>
    (object: unknown, msg?: string): void => {
      const fields = typeof object === 'object' && object !== null ? format({ ...(object as Record<string, unknown>) }) : { value: object };
      const err = fields.err instanceof Error ? { type: fields.err.name, message: fields.err.message } : fields.err;
      console.log(JSON.stringify({ level, ...bindings, ...fields, err, msg }));
    };
  const logger = {
    level: 'info',
    trace: () => undefined,
    debug: () => undefined,
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    fatal: line('fatal'),
    flush: (done?: () => void) => done?.(),
    child(more: Record<string, unknown>, options?: { formatters?: { log?: Formatter } }) {
      const own = options?.formatters?.log;
      return consoleLogger({ ...bindings, ...more }, own === undefined ? format : (o) => own(format(o)));
    },
  };
  return logger as unknown as Logger;
}
