import type { SvcClient } from '../client/svc-client';
import { webhookSecretProblem } from '../client/webhook-secret';
import type { Awaitable } from '../internal/checks/awaitable';
import type { LoggerLike, WebhookLogger } from '../internal/logging/logger';
import { booleanOption, customOption, functionOption, kindOf, numberOption, readOptions } from '../internal/checks/option-table';
import { checkLoggerOption, scrubbedLogger, type LoggerOption } from '../internal/logging/webhook-loggers';
import type { BoardSecretClaim, SecretResolver } from '../verify/secret-resolver';
import { expectUrlProblem, type ExpectUrl } from './expect-url';
import type { WebhookChange } from './watch-types';

/** The calls the watcher makes: an `SvcClient` has them all. */
export type WatchClient = Pick<SvcClient, 'getBoardWebhook' | 'setBoardWebhook' | 'pingBoardWebhook' | 'getBotWebhook' | 'setBotWebhook'>;

/** The boards to watch: their ids, or a function that lists them (called again every `boardsRefreshMs`). */
export type BoardList = readonly string[] | (() => Awaitable<Iterable<string>>);

/** The bot webhook, when it is watched with its own client (which holds the bot token). */
export interface WatchBotOptions {
  /** A client with the bot token. Default: the watcher's `client`. */
  client?: WatchClient;
  /** The bot webhook's secret, as the receiver verifies with: needed with `reenable` (the bot PUT takes `{ url, secret }`). */
  secret?: string;
  /**
   * The URL the bot webhook should deliver to: needed with `reenable` (unless `expectUrl` is a
   * function that answers for the bot). Another URL at svc is `misdirected`.
   */
  expectUrl?: string;
}

/** What a re-enable probe checks: the webhook and where svc delivers to. */
export type ProbeTarget = { readonly webhook: 'board'; readonly boardId: string; readonly url: string } | { readonly webhook: 'bot'; readonly url: string };

/** The options of `watchWebhooks`; docs/never-silently-disabled.md shows them at work. */
export interface WatchOptions {
  /** The setup client: an `SvcClient` with the token of a person who manages the boards (or the bot token, to watch only the bot). */
  client: WatchClient;
  /** The boards whose webhooks to watch: their ids, or a function that lists them, such as the one your secret resolver reads. */
  boards?: BoardList;
  /** Watch the bot webhook too: `true` (through `client`), or its own client and secret. */
  bot?: boolean | WatchBotOptions;
  /**
   * The board webhooks' secret, as your receiver verifies with: the same fixed secret (the first of
   * several is PUT), or the same resolver `({ boardId }) => secret`. Read only to re-enable: a board
   * PUT without a secret would make svc generate a new one, which your receiver does not know.
   */
  secret?: string | readonly string[] | SecretResolver<BoardSecretClaim>;
  /**
   * The URL each webhook should deliver to: one for every board webhook, or a function that answers
   * per webhook (`{ webhook: 'board', boardId }` or `{ webhook: 'bot' }`; undefined: not checked).
   * svc holding another scheme, host, port or path is reported `misdirected` (the query is not
   * compared, nor a trailing slash). Needed with `reenable`: the secret is PUT only to this URL.
   */
  expectUrl?: ExpectUrl;
  /** Re-enable a webhook svc disabled, once its receiver answers a probe. Default false: only report. */
  reenable?: boolean;
  /**
   * The probe before a re-enable; resolves true when the receiver answers. Default: for a board, svc's
   * ping (`POST /api/boards/{id}/webhook/ping`); for the bot, a POST without a signature to its URL.
   */
  probe?: (target: ProbeTarget) => Awaitable<boolean>;
  /** How often each webhook is polled (jittered by ±10 %). Default 300000 (5 min). */
  intervalMs?: number;
  /** How often a webhook svc answered 404 for is polled. Default 1800000 (30 min). */
  missingIntervalMs?: number;
  /** How often `boards`, when a function, is called again. Default: `intervalMs`. */
  boardsRefreshMs?: number;
  /** Calls to svc in flight at once, at most. Default 8. */
  maxInFlight?: number;
  /** Calls to svc started per second, at most. Default 50. */
  maxRequestsPerSecond?: number;
  /** The first wait after a failed probe; it doubles up to an hour. Default 60000. */
  reenableBackoffMs?: number;
  /** Told every change of health (and each webhook's first status). A throw is logged, never fatal. */
  onChange?: (change: WebhookChange) => void;
  /** A pino logger, any object with info/warn/error, or false for none. Default: the library's pino logger. */
  logger?: LoggerLike | false;
  /** The clock, in ms since the epoch. Default `Date.now`. */
  now?: () => number;
  /** The fetch of the default bot probe. Default: the global fetch. */
  fetch?: typeof fetch;
}

/** The options, checked. */
export interface WatchSettings {
  readonly client: WatchClient;
  readonly boards: BoardList | undefined;
  readonly bot: { readonly client: WatchClient; readonly secret: string | undefined; readonly expectUrl: string | undefined } | undefined;
  readonly secret: string | readonly string[] | SecretResolver<BoardSecretClaim> | undefined;
  readonly expectUrl: ExpectUrl | undefined;
  readonly reenable: boolean;
  readonly probe: ((target: ProbeTarget) => Awaitable<boolean>) | undefined;
  readonly intervalMs: number;
  readonly missingIntervalMs: number;
  readonly boardsRefreshMs: number;
  readonly maxInFlight: number;
  readonly maxRequestsPerSecond: number;
  readonly reenableBackoffMs: number;
  readonly onChange: ((change: WebhookChange) => void) | undefined;
  readonly logger: WebhookLogger;
  readonly now: () => number;
  readonly fetch: typeof fetch;
}

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

function isClient(value: unknown, methods: readonly string[]): value is WatchClient {
  return typeof value === 'object' && value !== null && methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
}

const clientOption = customOption<WatchClient>({
  doc: 'The setup client (`new SvcClient(...)`) with a token that may read the webhooks.',
  type: 'SvcClient',
  bounds: 'required',
  read(value, name) {
    if (!isClient(value, ['getBoardWebhook', 'getBotWebhook']))
      throw new TypeError(`svc-webhooks: \`${name}\` must be an SvcClient (new SvcClient({ baseUrl, token })); got ${kindOf(value)}`);
    return value;
  },
});

/** Every option of `watchWebhooks`, declared once. */
export const WATCH_OPTIONS = {
  client: clientOption,
  boards: customOption<BoardList | undefined>({
    doc: 'The boards to watch: their ids, or a function that lists them.',
    type: 'string[] | () => Iterable<string> | Promise<Iterable<string>>',
    defaultText: 'none',
    read(value, name) {
      if (value === undefined || typeof value === 'function') return value as BoardList | undefined;
      if (Array.isArray(value) && value.every((id) => typeof id === 'string')) return value as readonly string[];
      throw new TypeError(`svc-webhooks: \`${name}\` must be an array of board ids or a function that lists them; got ${kindOf(value)}`);
    },
  }),
  bot: customOption<boolean | WatchBotOptions | undefined>({
    doc: 'Watch the bot webhook: true (through `client`), or `{ client, secret, expectUrl }`.',
    type: 'boolean | { client?, secret?, expectUrl? }',
    defaultText: 'false',
    read(value, name) {
      if (value === undefined || typeof value === 'boolean') return value;
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const { client, secret, expectUrl, ...rest } = value as Record<string, unknown>;
        const unknown = Object.keys(rest)[0];
        if (unknown !== undefined)
          throw new TypeError(`svc-webhooks: \`${name}\` has no option \`${unknown}\`; it takes \`client\`, \`secret\` and \`expectUrl\``);
        if (expectUrl !== undefined) checkExpectUrl(expectUrl, `${name}.expectUrl`);
        if (client !== undefined && !isClient(client, ['getBotWebhook']))
          throw new TypeError(`svc-webhooks: \`${name}.client\` must be an SvcClient with the bot token; got ${kindOf(client)}`);
        if (secret !== undefined) checkSecret(secret, `${name}.secret`);
        return value as WatchBotOptions;
      }
      throw new TypeError(`svc-webhooks: \`${name}\` must be true, false or { client, secret, expectUrl }; got ${kindOf(value)}`);
    },
  }),
  secret: customOption<WatchOptions['secret']>({
    doc: "The board webhooks' secret as the receiver verifies with (a fixed one, several, or the resolver); read only to re-enable.",
    type: 'string | string[] | ({ boardId }) => string | string[] | undefined',
    defaultText: 'none',
    read(value, name) {
      if (value === undefined || typeof value === 'function') return value as WatchOptions['secret'];
      if (typeof value === 'string') return checkSecret(value, name);
      if (Array.isArray(value) && value.length > 0) {
        value.forEach((s, i) => checkSecret(s, `${name}[${i}]`));
        return value as readonly string[];
      }
      throw new TypeError(`svc-webhooks: \`${name}\` must be the webhook secret, several, or a resolver function; got ${kindOf(value)}`);
    },
  }),
  expectUrl: customOption<ExpectUrl | undefined>({
    doc: 'The URL each webhook should deliver to (every board webhook), or a function answering per webhook; another one at svc is `misdirected`.',
    type: 'string | ({ webhook, boardId? }) => string | undefined',
    defaultText: 'none: not checked (needed with `reenable`)',
    read(value, name) {
      if (value === undefined || typeof value === 'function') return value as ExpectUrl | undefined;
      return checkExpectUrl(value, name);
    },
  }),
  reenable: booleanOption({ doc: 'Re-enable a webhook svc disabled, once its receiver answers a probe.', default: false }),
  probe: functionOption<(target: ProbeTarget) => Awaitable<boolean>>({
    doc: 'The probe before a re-enable; resolves true when the receiver answers.',
    type: '(target) => boolean | Promise<boolean>',
    defaultText: "svc's ping (board); a POST without a signature (bot)",
  }),
  intervalMs: numberOption({ doc: 'How often each webhook is polled, jittered by ±10 %.', unit: 'ms', default: 5 * 60_000, min: 10, max: DAY_MS }),
  missingIntervalMs: numberOption({ doc: 'How often a webhook svc answered 404 for is polled.', unit: 'ms', default: 30 * 60_000, min: 10, max: 7 * DAY_MS }),
  boardsRefreshMs: numberOption({
    doc: 'How often `boards`, when a function, is called again.',
    unit: 'ms',
    default: undefined,
    defaultText: '`intervalMs`',
    min: 10,
    max: DAY_MS,
  }),
  maxInFlight: numberOption({ doc: 'Calls to svc in flight at once, at most.', unit: 'count', default: 8, min: 1, max: 256 }),
  maxRequestsPerSecond: numberOption({ doc: 'Calls to svc started per second, at most.', unit: 'count', default: 50, min: 0.01, max: 10_000, integer: false }),
  reenableBackoffMs: numberOption({
    doc: 'The first wait after a failed probe; it doubles up to an hour.',
    unit: 'ms',
    default: 60_000,
    min: 10,
    max: HOUR_MS,
  }),
  onChange: functionOption<(change: WebhookChange) => void>({ doc: 'Told every change of health (and each first status).', type: '(change) => void' }),
  logger: customOption<LoggerOption | undefined>({
    doc: 'A pino logger, any object with info/warn/error, or false for none; every line is scrubbed of secrets and tokens.',
    type: 'pino.Logger | { info, warn, error } | false',
    defaultText: 'pino at level info to stdout',
    read: checkLoggerOption,
  }),
  now: functionOption<() => number>({ doc: 'The clock, in ms since the epoch.', type: '() => number', default: Date.now, defaultText: '`Date.now`' }),
  fetch: functionOption<typeof fetch>({ doc: 'The fetch of the default bot probe.', type: 'typeof fetch', defaultText: 'the global `fetch`' }),
};

function checkExpectUrl(value: unknown, name: string): string {
  const problem = expectUrlProblem(value);
  if (problem !== undefined)
    throw new TypeError(`svc-webhooks: \`${name}\` must be the https:// URL svc should deliver to (svc holds no other): ${problem}; got ${kindOf(value)}`);
  return value as string;
}

function checkSecret(value: unknown, name: string): string {
  const problem = typeof value === 'string' ? webhookSecretProblem(value) : `it must be a string; got ${kindOf(value)}`;
  if (problem !== undefined) throw new TypeError(`svc-webhooks: \`${name}\` is not a webhook secret svc takes: ${problem}`);
  return value as string;
}

/** Checks `watchWebhooks`' options once, at setup: a TypeError or RangeError names the option. */
export function watchSettings(input: unknown): WatchSettings {
  const read = readOptions(WATCH_OPTIONS, input, { factory: 'watchWebhooks' });
  if (read.boards === undefined && (read.bot === undefined || read.bot === false)) {
    throw new TypeError('svc-webhooks: watchWebhooks needs `boards` (board ids or a function that lists them), `bot`, or both');
  }
  const bot =
    read.bot === undefined || read.bot === false
      ? undefined
      : {
          client: read.bot === true ? read.client : (read.bot.client ?? read.client),
          secret: read.bot === true ? undefined : read.bot.secret,
          expectUrl: read.bot === true ? undefined : read.bot.expectUrl,
        };
  if (read.reenable) {
    if (read.boards !== undefined && read.secret === undefined) {
      throw new TypeError(
        "svc-webhooks: `reenable` needs `secret`: the boards' webhook secret or the receiver's resolver (a board PUT without one makes svc generate a new secret your receiver does not know)",
      );
    }
    if (bot !== undefined && bot.secret === undefined)
      throw new TypeError('svc-webhooks: `reenable` needs `bot.secret`: the bot PUT takes the url and the secret');
    // The PUT carries the secret to the URL svc holds: only where it is known to be the receiver's.
    if (read.boards !== undefined && read.expectUrl === undefined)
      throw new TypeError(
        "svc-webhooks: `reenable` needs `expectUrl`: the URL the board webhooks should deliver to (or a function answering per board); the re-enabling PUT sends the receiver's secret, so only to that URL",
      );
    if (bot !== undefined && bot.expectUrl === undefined && typeof read.expectUrl !== 'function')
      throw new TypeError(
        "svc-webhooks: `reenable` needs `bot.expectUrl` (or an `expectUrl` function): the URL the bot webhook should deliver to; the re-enabling PUT sends the bot's secret, so only to that URL",
      );
    if (read.boards !== undefined && !isClient(read.client, ['setBoardWebhook', 'pingBoardWebhook']))
      throw new TypeError('svc-webhooks: `reenable` needs a `client` that can PUT and ping (an SvcClient)');
    if (bot !== undefined && !isClient(bot.client, ['setBotWebhook']))
      throw new TypeError('svc-webhooks: `reenable` needs a bot client that can PUT (an SvcClient)');
  }
  const fixed = [
    ...(typeof read.secret === 'string' ? [read.secret] : Array.isArray(read.secret) ? (read.secret as readonly string[]) : []),
    ...(bot?.secret === undefined ? [] : [bot.secret]),
  ];
  return {
    client: read.client,
    boards: read.boards,
    bot,
    secret: read.secret,
    expectUrl: read.expectUrl,
    reenable: read.reenable,
    probe: read.probe,
    intervalMs: read.intervalMs,
    missingIntervalMs: read.missingIntervalMs,
    boardsRefreshMs: read.boardsRefreshMs ?? read.intervalMs,
    maxInFlight: read.maxInFlight,
    maxRequestsPerSecond: read.maxRequestsPerSecond,
    reenableBackoffMs: read.reenableBackoffMs,
    onChange: read.onChange,
    logger: scrubbedLogger(read.logger as LoggerOption | undefined, { component: 'webhook-watcher' }, fixed),
    now: read.now ?? Date.now,
    fetch: read.fetch ?? globalThis.fetch,
  };
}
