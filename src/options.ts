import type { KeyObject } from 'node:crypto';
import pino, { type Logger } from 'pino';
import { DEFAULT_RETENTION_MS, type DeliveryStore } from './dedup/delivery-store';
import { memoryStore } from './dedup/memory-store';
import { inboxSettings, type InboxOptions, type InboxSettings } from './inbox/inbox-options';
import { schemaPolicies, type SchemaPolicy } from './validate/validate-payload';
import { secretKeys } from './verify/secret-keys';

export interface WebhookOptions {
  /** The webhook secret registered with svc, or several while a rotation is under way. */
  secret: string | readonly string[];
  /** The URL path the sender posts to, when mounted with `app.use()`. */
  path?: string;
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

export interface BoardWebhookOptions extends WebhookOptions {
  /** Largest accepted distance between X-Svc-Timestamp and now, either way, in seconds. Default 300. */
  tolerance?: number;
}

export type BotWebhookOptions = WebhookOptions;

export interface Settings {
  readonly keys: readonly KeyObject[];
  readonly path: string;
  readonly now: () => number;
  readonly limit: number;
  readonly timeoutMs: number;
  readonly leaseMs: number;
  readonly abandonAfterMs: number;
  readonly store: DeliveryStore;
  readonly logger: Logger;
  readonly schemaPolicy: SchemaPolicy;
  readonly toleranceSeconds: number;
  readonly inbox?: InboxSettings;
}

export const DEFAULT_PATHS = { board: '/webhooks/board', bot: '/webhooks/bot' } as const;
/** The body size the spec requires receivers to accept. */
export const SPEC_BODY_BYTES = 256 * 1024;
// The sender waits 10 s; a second is left for reading the body and for the store's round trips.
const MAX_TIMEOUT_MS = 9_000;
const KNOWN_OPTIONS = new Set(['secret', 'path', 'now', 'limit', 'timeout', 'lease', 'abandonAfter', 'store', 'logger', 'schemaPolicy', 'tolerance', 'inbox']);

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

function fallbackLogger(): Logger {
  defaultLogger ??= pino({ name: 'svc-webhooks', redact: REDACT_PATHS });
  return defaultLogger;
}

/** Checks and normalises options once, at setup; a bad option throws here, never per request. */
export function settings(input: unknown, webhook: 'board' | 'bot'): Settings {
  const options = (typeof input === 'string' || Array.isArray(input) ? { secret: input } : input) as BoardWebhookOptions;
  if (typeof options !== 'object' || options === null) throw new TypeError('svc-webhooks: pass the webhook secret or an options object');
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key) || (key === 'tolerance' && webhook === 'bot')) throw new TypeError(`svc-webhooks: unknown option \`${key}\``);
  }
  const timeoutMs = number(options.timeout, 8_000, 'timeout', 1, MAX_TIMEOUT_MS);
  const logger = (options.logger ?? fallbackLogger()).child({ webhook }, { redact: REDACT_PATHS });
  const policy = options.schemaPolicy ?? 'reject';
  if (!schemaPolicies.includes(policy)) throw new TypeError(`svc-webhooks: \`schemaPolicy\` must be one of ${schemaPolicies.join(', ')}`);
  if (options.now !== undefined && typeof options.now !== 'function') throw new TypeError('svc-webhooks: `now` must be a function returning ms since the epoch');
  return {
    keys: secretKeys(options.secret),
    path: path(options.path ?? DEFAULT_PATHS[webhook]),
    now: options.now ?? Date.now,
    limit: limit(options.limit),
    timeoutMs,
    leaseMs: number(options.lease, 60_000, 'lease', timeoutMs + 1, DEFAULT_RETENTION_MS),
    abandonAfterMs: number(options.abandonAfter, 15 * 60_000, 'abandonAfter', timeoutMs + 1, DEFAULT_RETENTION_MS),
    store: options.store ?? memoryStore({ logger }),
    logger,
    schemaPolicy: policy,
    toleranceSeconds: number(options.tolerance, 300, 'tolerance', 1, 24 * 60 * 60),
    ...(options.inbox === undefined ? {} : { inbox: inboxSettings(options.inbox) }),
  };
}

function number(value: unknown, fallback: number, name: string, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new RangeError(`svc-webhooks: \`${name}\` must be a number from ${min} to ${max}`);
  }
  return value;
}

function path(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/')) throw new TypeError('svc-webhooks: `path` must be a string starting with "/"');
  return normalisePath(value);
}

/** '/a/b/' and '/a/b' are one route, as in Express's default (non-strict) routing. */
export function normalisePath(pathname: string): string {
  return pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

function limit(value: unknown): number {
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
