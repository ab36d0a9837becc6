import { stdSerializers, type Bindings, type ChildLoggerOptions, type Logger } from 'pino';
import { GuardedLogger, SILENT_LOGGER, SinkLogger, type LineScrub, type WebhookLogger } from './logger';
import { redactSecrets } from './redact-secrets';

/**
 * What the library's logger (and each handler's `ctx.log`) drops from every line: fields named like
 * credentials, in any case; the value after such a header name in a raw header list; from any
 * string (a value, a field's name, the message) a configured secret, a signature (`v1=`/`sha256=`,
 * in any case and after any prefix, and 64 hex digits) or an svc token. Objects are scrubbed as
 * JSON writes them (own fields, `toJSON`'s answer) down to ten levels; deeper ones are cut.
 */
export const SENSITIVE_KEYS: ReadonlySet<string> = new Set([
  'secret',
  'secrets',
  'authorization',
  'proxy-authorization',
  'x-svc-signature',
  'token',
  'cookie',
  'set-cookie',
  'password',
]);
// Any spelling svc's or a proxy's (`V1=`, `SHA256=`, `sig_v1=`): the 64 hex digits are what is kept secret.
const SIGNATURE = /(sha256|v1)=[0-9a-f]{64}(?![0-9a-f])/gi;
const TOKEN_PREFIX = /svc_(bot|os|oc|oa|or|client)_/;
export const REDACTED = '[Redacted]';
/** What stands in for an object nested deeper than a line is scrubbed: it is not written at all. */
export const TOO_DEEP = '[Too deep]';
/** What stands in for a value whose fields could not be read (a getter or `toJSON` that throws). */
export const UNREADABLE = '[Unreadable]';

/** Never let a signature or secret reach a log line, whatever a handler logs (pino's redact paths). */
export const REDACT_PATHS = [
  'secret',
  '*.secret',
  'headers["x-svc-signature"]',
  'headers.authorization',
  'req.headers["x-svc-signature"]',
  'req.headers.authorization',
  'rawHeaders',
  'req.rawHeaders',
];
const MAX_DEPTH = 10;
/** What `scrubHeld` answers for a value that holds its content in own fields. */
const NOT_HELD = Symbol('not held');

export interface RedactingOptions {
  formatters: { log(object: object): object; bindings(bindings: object): object };
  serializers: { err(value: unknown): unknown; msg(value: unknown): unknown };
}

/**
 * pino child-logger options that scrub each line; `secrets` are the configured secret values (16+
 * characters). An error under `err` is left to the error serializer (which keeps its type and stack)
 * and scrubbed after it. The message is scrubbed by pino's serializer of its key: `log.error(err)`
 * makes the error's message the line's.
 */
export function redactingLogOptions(secrets: readonly string[]): RedactingOptions {
  const scrub = scrubber(secrets);
  return {
    formatters: {
      log(object) {
        const err = (object as { err?: unknown }).err;
        if (!(err instanceof Error)) return scrub(object, 0) as object;
        return { ...(scrub({ ...object, err: undefined }, 0) as object), err };
      },
      bindings: (bindings) => scrub(bindings, 0) as object,
    },
    // The standard serializer's result has a prototype of its own; its fields are copied to be scrubbed.
    serializers: {
      err: (value) => scrub(value instanceof Error ? { ...stdSerializers.err(value) } : value, 0),
      msg: (value) => scrub(value, 0),
    },
  };
}

/** No secrets of a board or bot to drop: a fixed secret is dropped by the webhook's own logger. */
export const NO_SECRETS: readonly string[] = Object.freeze([]);

/**
 * A child of `logger` that also drops `secrets` (with a secret resolver: those of the board or bot
 * that verified the delivery, which the webhook's own logger cannot know).
 */
export function childDropping(logger: WebhookLogger, bindings: Bindings, secrets: readonly string[]): WebhookLogger {
  // Stryker disable next-line ConditionalExpression: the silent logger's child is the silent logger (test/mutation/EQUIVALENT.internal.md)
  if (logger === SILENT_LOGGER) return logger;
  if (logger instanceof GuardedLogger) {
    try {
      return new GuardedLogger(childDropping(logger.inner, bindings, secrets));
    } catch {
      return logger;
    }
  }
  if (logger instanceof SinkLogger) {
    const child = logger.child(bindings);
    return secrets.length === 0 ? child : child.scrubbing((inner) => alsoDropping(inner, secrets));
  }
  const pino = logger as Logger;
  return secrets.length === 0 ? pino.child(bindings) : pino.child(bindings, redactingLogOptions(secrets) as ChildLoggerOptions);
}

/**
 * The scrub of a logger that is not pino: the same as pino's formatters and error serializer apply,
 * to the fields and to the message.
 */
export function lineScrub(secrets: readonly string[]): LineScrub {
  // console and winston show symbol-keyed and undefined fields, which pino's JSON never writes.
  const scrub = scrubber(secrets, { asJson: true });
  return { fields: (fields) => scrub(fields, 0) as Record<string, unknown>, message: textScrubber(secrets) };
}

function alsoDropping(inner: LineScrub, secrets: readonly string[]): LineScrub {
  const more = lineScrub(secrets);
  return { fields: (fields) => more.fields(inner.fields(fields)), message: (message) => more.message(inner.message(message)) };
}

/**
 * Drops from one text what a log line drops from its strings: `secrets` (those of 16+ characters,
 * as configured secrets are), signatures and svc tokens. For text that leaves through another way
 * than the logger, such as a handler's error recorded on a span.
 */
export function textScrubber(secrets: readonly string[]): (value: string) => string {
  const long = secrets.filter((s) => s.length >= 16);
  return (value: string): string => {
    let out = value;
    // The tests before each replacement only save work on text without a match (test/mutation/EQUIVALENT.internal.md).
    // Stryker disable next-line ConditionalExpression: a replacement without a match gives the text back
    for (const secret of long) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    // Stryker disable next-line ConditionalExpression,StringLiteral: a replacement without a match gives the text back
    if (out.includes('=')) out = out.replace(SIGNATURE, `$1=${REDACTED}`);
    // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: a replacement without a match gives the text back
    if (out.includes('svc_') && TOKEN_PREFIX.test(out)) out = redactSecrets(out);
    return out;
  };
}

/**
 * The same error with its message and stack scrubbed as a log line's would be: for errors that leave
 * the process another way than the logger (a dead letter's reason and stack, kept in Redis).
 */
export function scrubbedError<E extends Error>(error: E, secrets: readonly string[]): E {
  const text = textScrubber(secrets);
  error.message = text(error.message);
  if (typeof error.stack === 'string') Object.defineProperty(error, 'stack', { value: text(error.stack), configurable: true, writable: true });
  return error;
}

function scrubber(secrets: readonly string[], how: { asJson: boolean } = { asJson: false }): (value: unknown, depth: number) => unknown {
  const text = textScrubber(secrets);
  const scrub = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return text(value);
    if (typeof value !== 'object' || value === null) return value;
    if (depth > MAX_DEPTH) return TOO_DEEP;
    if (Array.isArray(value)) return scrubArray(value, depth);
    if (value instanceof Error) return scrubError(value, depth);
    return scrubObject(value, depth);
  };
  /** An object as JSON writes it: `toJSON`'s answer, or its own fields. Left as it is when nothing in it changes. */
  const scrubObject = (value: object, depth: number): unknown => {
    try {
      const held = scrubHeld(value, depth);
      if (held !== NOT_HELD) return held;
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') {
        const json = (toJSON as (key: string) => unknown).call(value, '');
        const out = json === value ? scrubFields(value, depth) : scrub(json, depth + 1);
        return out === json ? value : out;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      // A request logged whole (ctx.req): its method, url and headers, as pino's request serializer shows them.
      const req = value as { headers?: unknown; method?: unknown; url?: unknown; rawHeaders?: unknown };
      if (proto !== Object.prototype && proto !== null && typeof req.headers === 'object' && req.headers !== null && Array.isArray(req.rawHeaders)) {
        return { method: req.method, url: scrub(req.url, depth + 1), headers: scrub({ ...(req.headers as object) }, depth + 1) };
      }
      return scrubFields(value, depth);
    } catch {
      return UNREADABLE;
    }
  };
  /**
   * Values whose content is not in own fields, which console and winston still show (Node's inspect
   * reads their internal slots): they are rendered as what they hold, scrubbed; bytes by their size.
   */
  const scrubHeld = (value: object, depth: number): unknown => {
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[${value.constructor.name}: ${value.byteLength} bytes]`;
    if (value instanceof Map) return scrubEntries(value, depth);
    if (value instanceof Set) return scrubArray([...value], depth);
    // Fetch's classes name themselves by their tag. Reading it loads nothing, whereas reading
    // globalThis.Headers on Node 20 loads undici (about 25 ms when the first logger is made).
    const tag = (value as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag];
    if (tag !== 'Headers' && tag !== 'Request' && tag !== 'Response') return NOT_HELD;
    const web = globalThis as { Headers?: typeof Headers; Request?: typeof Request; Response?: typeof Response };
    if (web.Headers !== undefined && value instanceof web.Headers) return scrubEntries(value, depth);
    if (web.Request !== undefined && value instanceof web.Request)
      return { method: value.method, url: scrub(value.url, depth + 1), headers: scrubEntries(value.headers, depth + 1) };
    if (web.Response !== undefined && value instanceof web.Response) return { status: value.status, headers: scrubEntries(value.headers, depth + 1) };
    return NOT_HELD;
  };
  /** A Map's or Headers' entries as fields: a name like a credential's hides its value. */
  const scrubEntries = (entries: Iterable<[unknown, unknown]>, depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [key, item] of entries) {
      const name = String(key);
      put(out, text(name), SENSITIVE_KEYS.has(name.toLowerCase()) ? REDACTED : scrub(item, depth + 1));
    }
    return out;
  };
  /** An object's own fields, names and values scrubbed; copied only once something in it changes (most lines hold nothing to drop). */
  const scrubFields = (value: object, depth: number): unknown => {
    const source = value as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    const keys = Object.keys(source);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const item = source[key];
      // A field without a value is left out, as JSON (and so pino) leaves it out.
      if (item === undefined && how.asJson) {
        if (out === undefined) {
          out = {};
          for (let j = 0; j < i; j++) put(out, keys[j]!, source[keys[j]!]);
        }
        continue;
      }
      const name = text(key);
      const next = SENSITIVE_KEYS.has(key.toLowerCase()) ? REDACTED : scrub(item, depth + 1);
      if (next === item && name === key && out === undefined) continue;
      if (out === undefined) {
        out = {};
        for (let j = 0; j < i; j++) put(out, keys[j]!, source[keys[j]!]);
      }
      put(out, name, next);
    }
    // Symbol-keyed fields are dropped, as JSON (and so pino) drops them.
    if (how.asJson && out === undefined && Object.getOwnPropertySymbols(source).length > 0) return Object.fromEntries(keys.map((k) => [k, source[k]]));
    return out ?? value;
  };
  const scrubArray = (list: readonly unknown[], depth: number): readonly unknown[] => {
    let out: unknown[] | undefined;
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      // A raw header list: [name, value, name, value, ...]
      const previous = i > 0 ? list[i - 1] : undefined;
      const next = typeof previous === 'string' && i % 2 === 1 && SENSITIVE_KEYS.has(previous.toLowerCase()) ? REDACTED : scrub(item, depth + 1);
      if (next === item && out === undefined) continue;
      out ??= list.slice(0, i);
      out[i] = next;
    }
    return out ?? list;
  };
  const scrubError = (err: Error, depth: number): Record<string, unknown> => {
    let out: Record<string, unknown>;
    try {
      out = { type: text(String(err.name)), message: text(String(err.message)) };
      if (typeof err.stack === 'string') out.stack = text(err.stack);
      for (const key of Object.keys(err)) {
        // A field without a value is left out, as JSON leaves it out.
        if (key !== 'cause' && (err as unknown as Record<string, unknown>)[key] !== undefined)
          put(out, text(key), SENSITIVE_KEYS.has(key.toLowerCase()) ? REDACTED : scrub((err as unknown as Record<string, unknown>)[key], depth + 1));
      }
      if (err.cause !== undefined) out.cause = scrub(err.cause, depth + 1);
    } catch {
      out = { type: 'Error', message: 'the error could not be read' };
    }
    return out;
  };
  return scrub;
}

/** `out[key] = value`, for a key named `__proto__` too (an own field, never the copy's prototype). */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  // Defining every field would give the same copy, only slower (test/mutation/EQUIVALENT.internal.md).
  // Stryker disable next-line ConditionalExpression: defining a field other than __proto__ gives the same copy
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}
