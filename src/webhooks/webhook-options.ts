import type { DeliveryStore } from '../dedup/delivery-store';
import { parkAfterMsOption } from '../dedup/parking-lot';
import { INBOX_OPTIONS, inboxSettings, type InboxOptions, type InboxSettings } from '../inbox/inbox-options';
import { DEFAULT_RETENTION_MS } from '../internal/delivery/svc-limits';
import { checkLoggerOption, type LoggerOption } from '../internal/logging/webhook-loggers';
import {
  choiceOption,
  customOption,
  functionOption,
  kindOf,
  numberOption,
  stringOption,
  type OptionDeclaration,
  type OptionTable,
} from '../internal/checks/option-table';
import { IGNORE_OPTIONS, ignoreSettings, type IgnoreOptions, type IgnoreSettings } from '../route/origin';
import { schemaPolicies, type SchemaPolicy } from '../validate/delivery-checks';
import { SECRET_LOOKUP_OPTIONS, secretLookupSettings, type SecretLookupOptions, type SecretLookupSettings } from '../verify/secret-lookup-options';
import type { BoardSecretClaim, BotSecretClaim, SecretResolver } from '../verify/secret-resolver';

/** The options of `svcBoardWebhook` and `svcBotWebhook`; docs/options.md lists them with their bounds. */
export interface WebhookOptions<Claim = BoardSecretClaim | BotSecretClaim> {
  /**
   * The webhook secret registered with svc, or several while a rotation of that one secret is under
   * way; or a resolver that answers the secret(s) of the board (bot) each delivery claims.
   */
  secret: string | readonly string[] | SecretResolver<Claim>;
  /**
   * The path the webhook answers, relative to where it is mounted (as for an Express router). With a
   * resolver it may name the board or bot in one segment: `/webhooks/boards/:boardId`, `/webhooks/bots/:botId`.
   */
  path?: string;
  /** With a resolver: how its answers are cached and how long a lookup may take. */
  secretLookup?: SecretLookupOptions;
  /** Clock in ms since the epoch, like `Date.now` (the default). */
  now?: () => number;
  /** Largest body accepted, in bytes, or a text such as '512kb' / '1mb'. Default 512 KiB; at least 256 KiB (what svc may send). */
  maxBodyBytes?: number | string;
  /** Handler deadline in ms from the request's arrival, at most 9000 (the sender waits 10 s). Default 8000. */
  timeoutMs?: number;
  /** How long a claim holds while handlers run, in ms; it must outlive `timeoutMs`. Default 60000. */
  leaseMs?: number;
  /**
   * How long handlers that outlived `timeoutMs` may keep their delivery's claim, in ms from the
   * request's arrival. A run still unsettled then is abandoned: it is logged at error and its claim
   * released, so the sender's next retry runs the handlers again (possibly beside the hung run).
   * Default 15 minutes.
   */
  abandonAfterMs?: number;
  /** The de-dup store. Default: a new in-memory store for this webhook. */
  store?: DeliveryStore;
  /**
   * A pino logger, any object with `info`, `warn` and `error` (console, winston, bunyan), or `false`
   * for none. Every line is scrubbed of secrets, signatures and tokens. Default: pino at level info to
   * stdout (JSON lines through the console where there is no stdout).
   */
  logger?: LoggerOption;
  /**
   * Acknowledge now, process later: accepted deliveries are stored in a BullMQ queue on Redis and
   * answered 200 at once; the handlers run in workers (`work()`). Default: handlers run in the request.
   */
  inbox?: InboxOptions;
  /**
   * An authentic delivery that fails the schema: 'reject' (400, default), 'warn' (log and handle),
   * 'skip' (do not validate) or 'park' (answered 200 and kept in the store's parking lot for a replay).
   */
  schemaPolicy?: SchemaPolicy;
  /**
   * Park instead of losing: an attempt that comes this long after the delivery first failed (its
   * handlers threw or timed out) is answered 200 `{ ok: true, parked: true }` without running the
   * handlers, and the delivery is kept in the store's parking lot for a replay. svc retries for a
   * day and then drops the delivery, and disables a webhook that failed all day. `false`: never park.
   * Default 20 hours. Needs a store with a parking lot (memory, Redis, PostgreSQL); other stores park nothing.
   */
  parkAfterMs?: number | false;
}

/** The options of `svcBoardWebhook`: the common ones and the timestamp tolerance. */
export interface BoardWebhookOptions extends WebhookOptions<BoardSecretClaim> {
  /** Largest accepted distance between X-Svc-Timestamp and now, either way, in seconds. Default 300. */
  toleranceSeconds?: number;
  /**
   * Events to answer 200 `{"ok":true,"ignored":…}` without running handlers: this bot's own changes
   * (`self`: its bot token or bot user id), every bot's (`bots`), automation rules' (`rules`). Stops
   * a bot that writes to tasks from handling its own writes again. Not with `inbox.ordered`.
   */
  ignore?: IgnoreOptions;
}

/** The options of `svcBotWebhook`. */
export type BotWebhookOptions = WebhookOptions<BotSecretClaim>;

/** The paths the webhooks answer by default. */
export const DEFAULT_PATHS = { board: '/webhooks/board', bot: '/webhooks/bot' } as const;
/** The body size the spec requires receivers to accept. */
export const SPEC_BODY_BYTES = 256 * 1024;
// The sender waits 10 s; a second is left for reading the body and for the store's round trips.
const MAX_TIMEOUT_MS = 9_000;
const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** The secret, or what the usual mistakes give instead (an unset environment variable). */
const secretOption = customOption<unknown>({
  doc: 'The webhook secret registered with svc (16 to 256 characters), several during a rotation, or a resolver `(claim) => secret(s)` for many boards or bots.',
  type: 'string | string[] | (claim) => string | string[] | undefined',
  bounds: 'required',
  read(value, name) {
    if (typeof value === 'string' && value !== '') return value;
    if (Array.isArray(value) || typeof value === 'function') return value;
    const cause =
      value === undefined
        ? ': is the environment variable that should hold it set (process.env.SVC_BOARD_WEBHOOK_SECRET)?'
        : value === ''
          ? ': an environment variable that is set but empty gives one'
          : '';
    throw new TypeError(
      `svc-webhooks: \`${name}\` must be the webhook secret (a string of 16 to 256 characters), several of them, or a resolver function; got ${kindOf(value)}${cause}`,
    );
  },
});

/** `maxBodyBytes`: a number of bytes, or a text such as '512kb'. */
export const maxBodyBytesOption = customOption<number>({
  doc: 'Largest body accepted, in bytes or as a text such as `512kb` or `1mb`; svc may send 256 KiB.',
  type: "number (bytes) | string ('512kb')",
  defaultText: '524288 (512 KiB)',
  bounds: `at least ${SPEC_BODY_BYTES} (256 KiB)`,
  read(value, name) {
    let bytes = 512 * 1024;
    if (typeof value === 'number') bytes = value;
    else if (typeof value === 'string') {
      const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb)?\s*$/i.exec(value);
      bytes = m ? Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]!) : Number.NaN;
    } else if (value !== undefined) bytes = Number.NaN;
    if (!Number.isFinite(bytes) || bytes < SPEC_BODY_BYTES) {
      throw new RangeError(`svc-webhooks: \`${name}\` must be at least ${SPEC_BODY_BYTES} bytes (256kb), the body size svc may send; got ${kindOf(value)}`);
    }
    return bytes;
  },
});

/** `toleranceSeconds` (board). */
export const toleranceSecondsOption = numberOption({
  doc: 'Largest accepted distance between X-Svc-Timestamp and now, either way (the spec says 300).',
  unit: 'seconds',
  default: 300,
  min: 1,
  max: 24 * 60 * 60,
  integer: false,
});

/** A nested options object, read through its own table. */
function nested<T>(spec: { doc: string; type: string; table: OptionTable; read: (value: unknown) => T }): OptionDeclaration<T | undefined> {
  return {
    doc: spec.doc,
    type: spec.type,
    defaultText: 'none',
    bounds: 'see below',
    nested: spec.table,
    read: (value) => (value === undefined ? undefined : spec.read(value)),
  };
}

const storeOption = customOption<DeliveryStore | undefined>({
  doc: 'The de-dup store: `memoryStore()`, `redisStore()`, `postgresStore()` or your own `DeliveryStore`.',
  type: 'DeliveryStore',
  defaultText: 'a new memoryStore() for this webhook',
  read(value, name) {
    if (value === undefined) return undefined;
    const store = value as Partial<Record<'claim' | 'commit' | 'release', unknown>> | null;
    if (
      typeof store !== 'object' ||
      store === null ||
      typeof store.claim !== 'function' ||
      typeof store.commit !== 'function' ||
      typeof store.release !== 'function'
    ) {
      throw new TypeError(
        `svc-webhooks: \`${name}\` must be a de-dup store with claim, commit and release (memoryStore(), redisStore(), postgresStore()); got ${kindOf(value)}`,
      );
    }
    return value as DeliveryStore;
  },
});

/** The options both webhooks take, declared once (docs/options.md is made from them). */
function commonOptions(webhook: 'board' | 'bot') {
  return {
    secret: secretOption,
    path: stringOption({
      doc: 'The path the webhook answers, relative to where it is mounted (as for an Express router); with a resolver it may name the board or bot: `/webhooks/boards/:boardId`.',
      default: DEFAULT_PATHS[webhook],
      defaultText: webhook === 'board' ? '`/webhooks/board` (bot: `/webhooks/bot`)' : '`/webhooks/bot`',
    }),
    secretLookup: nested<SecretLookupSettings>({
      doc: 'With a resolver: how its answers are cached and how long a lookup may take (see `secretLookup`).',
      type: 'object',
      table: SECRET_LOOKUP_OPTIONS,
      read: (value) => secretLookupSettings(value, webhook === 'board' ? 'svcBoardWebhook' : 'svcBotWebhook'),
    }),
    now: functionOption<() => number>({ doc: 'The clock, in ms since the epoch.', type: '() => number', default: Date.now, defaultText: '`Date.now`' }),
    maxBodyBytes: maxBodyBytesOption,
    timeoutMs: numberOption({
      doc: "Handler deadline from the request's arrival (svc waits 10 s); past it the delivery is answered 503 and retried.",
      unit: 'ms',
      default: 8_000,
      min: 1,
      max: MAX_TIMEOUT_MS,
      integer: false,
    }),
    leaseMs: numberOption({
      doc: 'How long a claim holds while handlers run (renewed while they do); more than `timeoutMs`.',
      unit: 'ms',
      default: 60_000,
      min: 1,
      max: DEFAULT_RETENTION_MS,
      integer: false,
      bounds: `more than timeoutMs, up to ${DEFAULT_RETENTION_MS}`,
    }),
    abandonAfterMs: numberOption({
      doc: "How long handlers that outlived `timeoutMs` keep their delivery's claim, from arrival; a run still unsettled then is abandoned and its claim released for the retry.",
      unit: 'ms',
      default: 15 * 60_000,
      min: 1,
      max: DEFAULT_RETENTION_MS,
      integer: false,
      bounds: `more than timeoutMs, up to ${DEFAULT_RETENTION_MS}`,
    }),
    store: storeOption,
    logger: customOption<LoggerOption | undefined>({
      doc: 'A pino logger, any object with info/warn/error (console, winston, bunyan), or false for none; every line is scrubbed of secrets.',
      type: 'pino.Logger | { info, warn, error } | false',
      defaultText: 'pino at level info to stdout (JSON lines through the console where there is no stdout)',
      read: checkLoggerOption,
    }),
    inbox: nested<InboxSettings>({
      doc: 'Acknowledge now, process later: accepted deliveries go to a BullMQ queue on Redis and handlers run in workers (see `inbox`).',
      type: 'object',
      table: INBOX_OPTIONS,
      read: (value) => inboxSettings(value, webhook === 'board' ? 'svcBoardWebhook' : 'svcBotWebhook'),
    }),
    schemaPolicy: choiceOption<SchemaPolicy>({
      doc: 'An authentic delivery that fails the schema: refused (400), logged and handled, not validated, or parked at once (200; needs a store with a parking lot).',
      choices: schemaPolicies,
      default: 'reject',
    }),
    parkAfterMs: parkAfterMsOption,
  };
}

/** Every option of `svcBoardWebhook`. */
export const BOARD_WEBHOOK_OPTIONS = {
  ...commonOptions('board'),
  toleranceSeconds: toleranceSecondsOption,
  ignore: nested<IgnoreSettings>({
    doc: 'Events answered 200 `{"ok":true,"ignored":…}` without running handlers: this bot\'s own changes, other bots\', automation rules\' (see `ignore`). Not with `inbox.ordered`.',
    type: 'object',
    table: IGNORE_OPTIONS,
    read: (value) => ignoreSettings(value, 'svcBoardWebhook'),
  }),
};
/** Every option of `svcBotWebhook`. */
export const BOT_WEBHOOK_OPTIONS = commonOptions('bot');

/** Names of earlier versions, so that an upgrade is told what replaced them. */
export const RENAMED_OPTIONS: Readonly<Record<string, string>> = {
  limit: 'maxBodyBytes',
  timeout: 'timeoutMs',
  lease: 'leaseMs',
  abandonAfter: 'abandonAfterMs',
  tolerance: 'toleranceSeconds',
};

/**
 * An ignored event never reaches the queue, so with board order the board's next event would wait
 * `gapWaitMs` for its sequence and run with a false `ctx.gap`: the two options are refused together.
 */
export function checkIgnore(read: { ignore?: unknown; inbox: InboxSettings | undefined }): void {
  const ordered = read.inbox?.ordered ?? false;
  const inOrder = typeof ordered === 'boolean' ? ordered : ordered.size > 0;
  if (read.ignore !== undefined && inOrder)
    throw new TypeError(
      'svc-webhooks: `ignore` cannot be combined with `inbox.ordered`: an ignored event never reaches the queue, so the next event of its board would wait `gapWaitMs` for it. Skip those events in the handler with `ctx.origin` instead',
    );
}

/** A claim must outlive its handlers' deadline: `leaseMs` and `abandonAfterMs` more than `timeoutMs`. */
export function checkDeadlines(read: { timeoutMs: number; leaseMs: number; abandonAfterMs: number }): void {
  for (const name of ['leaseMs', 'abandonAfterMs'] as const) {
    if (read[name] <= read.timeoutMs)
      throw new RangeError(
        `svc-webhooks: \`${name}\` (${read[name]}) must be more than \`timeoutMs\` (${read.timeoutMs}): a claim must outlive its handlers' deadline`,
      );
  }
}

// Each interface and its table name the same options.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
true satisfies Same<keyof BoardWebhookOptions, keyof typeof BOARD_WEBHOOK_OPTIONS>;
true satisfies Same<keyof BotWebhookOptions, keyof typeof BOT_WEBHOOK_OPTIONS>;
