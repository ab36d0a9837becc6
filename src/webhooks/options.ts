import pino, { type Logger } from 'pino';
import { DEFAULT_RETENTION_MS, type DeliveryStore } from '../dedup/delivery-store';
import type { SecretSource } from '../verify/secret-source';
import type { Settings } from '../receive/settings';
import { memoryStore } from '../dedup/memory-store';
import { inboxSettings, type InboxOptions } from '../inbox/inbox-options';
import { schemaPolicies, type SchemaPolicy } from '../validate/validate-payload';
import { redactingLogOptions } from '../internal/log-redaction';
import { optionNumber } from '../internal/option-number';
import { normalisePath, pathPattern, type PathPattern } from '../internal/path-pattern';

export type { Settings } from '../receive/settings';
export type { SecretSource } from '../verify/secret-source';
import { secretKeys } from '../verify/secret-keys';
import { SecretLookup, type BoardSecretClaim, type BotSecretClaim, type SecretLookupOptions, type SecretResolver } from '../verify/secret-resolver';

export interface WebhookOptions<Claim = BoardSecretClaim | BotSecretClaim> {
  /**
   * The webhook secret registered with svc, or several while a rotation of that one secret is under
   * way; or a resolver that answers the secret(s) of the board (bot) each delivery claims.
   */
  secret: string | readonly string[] | SecretResolver<Claim>;
  /**
   * The URL path the sender posts to, when mounted with `app.use()`. With a resolver it may name
   * the board or bot in one segment: `/webhooks/boards/:boardId`, `/webhooks/bots/:botId`.
   */
  path?: string;
  /** With a resolver: how its answers are cached and how long a lookup may take. */
  secretLookup?: SecretLookupOptions;
  /** Clock in ms since the epoch, like `Date.now` (the default). */
  now?: () => number;
  /** Largest body accepted, in bytes or as '512kb' / '1mb'. Default 512 KiB; at least 256 KiB. */
  limit?: number | string;
  /** Handler deadline in ms from the request's arrival, at most 9000 (the sender waits 10 s). Default 8000. */
  timeout?: number;
  /** How long a claim holds while handlers run, in ms; it must outlive `timeout`. Default 60000. */
  lease?: number;
  /**
   * How long handlers that outlived `timeout` may keep their delivery's claim, in ms from the
   * request's arrival. A run still unsettled then is abandoned: it is logged at error and its claim
   * released, so the sender's next retry runs the handlers again (possibly beside the hung run).
   * Default 15 minutes.
   */
  abandonAfter?: number;
  /** The de-dup store. Default: a new in-memory store for this middleware. */
  store?: DeliveryStore;
  /** A pino logger. Default: pino at level info, to stdout. */
  logger?: Logger;
  /**
   * Acknowledge now, process later: accepted deliveries are stored in a BullMQ queue on Redis and
   * answered 200 at once; the handlers run in workers (`work()`). Default: handlers run in the request.
   */
  inbox?: InboxOptions;
  /** What to do with an authentic delivery that fails the schema: 'reject' (400, default), 'warn' (log and handle) or 'skip' (do not validate). */
  schemaPolicy?: SchemaPolicy;
}

export interface BoardWebhookOptions extends WebhookOptions<BoardSecretClaim> {
  /** Largest accepted distance between X-Svc-Timestamp and now, either way, in seconds. Default 300. */
  tolerance?: number;
}

export type BotWebhookOptions = WebhookOptions<BotSecretClaim>;

export const DEFAULT_PATHS = { board: '/webhooks/board', bot: '/webhooks/bot' } as const;
/** The body size the spec requires receivers to accept. */
export const SPEC_BODY_BYTES = 256 * 1024;
// The sender waits 10 s; a second is left for reading the body and for the store's round trips.
const MAX_TIMEOUT_MS = 9_000;
const KNOWN_OPTIONS = new Set(['secret', 'path', 'secretLookup', 'now', 'limit', 'timeout', 'lease', 'abandonAfter', 'store', 'logger', 'schemaPolicy', 'tolerance', 'inbox']);
const PATH_PARAMS = { board: ['boardId'], bot: ['botId'] } as const;

/** Never let a signature or secret reach a log line, whatever a handler logs. */
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

let defaultLogger: Logger | undefined;

/**
 * Lines are gathered and written by the event loop in batches (at 4 KiB, and at least every 250 ms),
 * never with a blocking write: a slow reader of stdout (a pipe, a log shipper) must not stall
 * deliveries. pino writes what is pending when the process exits, also after an uncaught exception;
 * `close()` writes it too. A SIGKILL loses at most the last 250 ms of lines.
 */
export const LOG_BATCH = { minLength: 4096, periodicFlush: 250 } as const;

function fallbackLogger(): Logger {
  defaultLogger ??= pino({ name: 'svc-webhooks' }, pino.destination({ dest: 1, sync: false, ...(inWorkers() ? {} : LOG_BATCH) }));
  return defaultLogger;
}

/**
 * Cloudflare Workers keep no process between requests to write a batch later: there each line is
 * written as soon as it is logged.
 */
function inWorkers(): boolean {
  return (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';
}

/** Writes what the logger holds; resolves when written, or at once for a logger that cannot say. */
export function flushLog(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush(() => resolve());
    } catch {
      resolve();
    }
  });
}

/** Checks and normalises options once, at setup; a bad option throws here, never per request. */
export function settings(input: unknown, webhook: 'board' | 'bot'): Settings {
  const options = (typeof input === 'string' || Array.isArray(input) || typeof input === 'function' ? { secret: input } : input) as BoardWebhookOptions;
  if (typeof options !== 'object' || options === null) throw new TypeError('svc-webhooks: pass the webhook secret or an options object');
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key) || (key === 'tolerance' && webhook === 'bot')) throw new TypeError(`svc-webhooks: unknown option \`${key}\``);
  }
  const timeoutMs = optionNumber(options.timeout, 8_000, 'timeout', 1, MAX_TIMEOUT_MS);
  const fixedSecrets = typeof options.secret === 'string' ? [options.secret] : Array.isArray(options.secret) ? (options.secret as unknown[]).filter((s): s is string => typeof s === 'string') : [];
  const parent = options.logger ?? fallbackLogger();
  const logger = parent.child({ webhook }, { redact: REDACT_PATHS, ...redactingLogOptions(fixedSecrets) });
  const policy = options.schemaPolicy ?? 'reject';
  if (!schemaPolicies.includes(policy)) throw new TypeError(`svc-webhooks: \`schemaPolicy\` must be one of ${schemaPolicies.join(', ')}`);
  if (options.now !== undefined && typeof options.now !== 'function') throw new TypeError('svc-webhooks: `now` must be a function returning ms since the epoch');
  const pattern = pathPattern(options.path ?? DEFAULT_PATHS[webhook], PATH_PARAMS[webhook]);
  const now = options.now ?? Date.now;
  return {
    secrets: secretSource(options, webhook, pattern, logger, now),
    fixedSecrets,
    path: pattern.path,
    pattern,
    now,
    limit: bodyLimit(options.limit),
    timeoutMs,
    leaseMs: optionNumber(options.lease, 60_000, 'lease', timeoutMs + 1, DEFAULT_RETENTION_MS),
    abandonAfterMs: optionNumber(options.abandonAfter, 15 * 60_000, 'abandonAfter', timeoutMs + 1, DEFAULT_RETENTION_MS),
    store: options.store ?? memoryStore({ logger }),
    logger,
    lineLogger: parent.child({ webhook }),
    schemaPolicy: policy,
    toleranceSeconds: toleranceOption(options.tolerance),
    ...(options.inbox === undefined ? {} : { inbox: inboxSettings(options.inbox) }),
  };
}

export { normalisePath };

/** The `tolerance` option in seconds (board). */
export function toleranceOption(value: unknown): number {
  return optionNumber(value, 300, 'tolerance', 1, 24 * 60 * 60);
}

function secretSource(options: BoardWebhookOptions, webhook: 'board' | 'bot', pattern: PathPattern, logger: Logger, now: () => number): SecretSource {
  const secret: unknown = options.secret;
  if (typeof secret !== 'function') {
    if (pattern.param !== undefined) throw new TypeError(`svc-webhooks: a \`path\` with :${pattern.param} needs \`secret\` to be a resolver, which gets that id`);
    if (options.secretLookup !== undefined) throw new TypeError('svc-webhooks: `secretLookup` applies only when `secret` is a resolver function');
    return { keys: secretKeys(secret) };
  }
  // A bot update names no bot the receiver could trust before verifying it, so each bot has its own path.
  if (webhook === 'bot' && pattern.param === undefined) {
    throw new TypeError('svc-webhooks: a bot secret resolver needs one path per bot, e.g. `path: "/webhooks/bots/:botId"`');
  }
  if (options.secretLookup !== undefined && (typeof options.secretLookup !== 'object' || options.secretLookup === null)) {
    throw new TypeError('svc-webhooks: `secretLookup` must be an object');
  }
  const resolver = secret as (claim: object) => ReturnType<SecretResolver<object>>;
  const resolve = webhook === 'board' ? (id: string) => resolver({ boardId: id }) : (id: string) => resolver({ botId: id });
  return { lookup: new SecretLookup(resolve, webhook, options.secretLookup ?? {}, logger, now) };
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** The `limit` option in bytes: a number, or a text such as '512kb'. */
export function bodyLimit(value: unknown): number {
  let bytes = 512 * 1024;
  if (typeof value === 'number') bytes = value;
  else if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb)?\s*$/i.exec(value);
    bytes = m ? Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]!) : Number.NaN;
  } else if (value !== undefined) bytes = Number.NaN;
  if (!Number.isFinite(bytes) || bytes < SPEC_BODY_BYTES) {
    throw new RangeError(`svc-webhooks: \`limit\` must be at least ${SPEC_BODY_BYTES} bytes (256kb), the body size svc may send`);
  }
  return bytes;
}
