import { parseBotToken, botTokenProblem } from '../client/bot-token';
import type { Delivery } from '../internal/delivery/delivery';
import type { IgnoreReason } from '../internal/delivery/delivery-record';
import { booleanOption, customOption, kindOf, readOptions } from '../internal/checks/option-table';
import { isObject, isUuid } from '../internal/checks/value-checks';

export type { IgnoreReason } from '../internal/delivery/delivery-record';

/**
 * Who made a board event's change, read from its `actor` and `rule` as the spec defines them:
 *
 * - `rule`: an automation rule (`rule` set; svc sends such changes as an event of their own, with
 *   `actor` null);
 * - `server`: svc itself without a rule (`actor` and `rule` null: auto-archive, Git events, `ping`);
 * - `bot`: a bot user (`actor.is_bot` true);
 * - `person`: a person (an `actor` whose `is_bot` is false).
 */
export type Origin = 'person' | 'bot' | 'rule' | 'server';

/** The board webhook's `ignore` option: which events to answer 200 without running handlers. */
export interface IgnoreOptions {
  /**
   * This bot's own changes: its bot token (`svc_bot_<bot id>_…`, from which only the bot id is
   * read, offline) or its bot user id (a UUID). Events whose `actor.id` is that bot are ignored.
   */
  self?: string;
  /** Every bot's changes (`actor.is_bot` true), this bot's included. Default false. */
  bots?: boolean;
  /** Changes made by automation rules (`rule` set, `actor` null). Default false. */
  rules?: boolean;
}

/** The `ignore` option as read at setup: the bot user id, never the token. */
export interface IgnoreSettings {
  /** The bot user id of `ignore.self`, in lower case. */
  readonly self: string | undefined;
  readonly bots: boolean;
  readonly rules: boolean;
}

/** The origin of a board event (see `Origin`); a body without the fields (`schemaPolicy`) reads as `server`. */
export function originOf(event: unknown): Origin {
  if (!isObject(event)) return 'server';
  if (isObject(event.rule)) return 'rule';
  const actor = event.actor;
  if (!isObject(actor)) return 'server';
  return actor.is_bot === true ? 'bot' : 'person';
}

/** Why `ignore` leaves this board event out, or undefined when its handlers run. */
export function ignoredBy(ignore: IgnoreSettings, event: unknown): IgnoreReason | undefined {
  if (isObject(event) && isSelf(ignore.self, event.actor)) return 'self';
  const origin = originOf(event);
  if (ignore.bots && origin === 'bot') return 'bot';
  if (ignore.rules && origin === 'rule') return 'rule';
  return undefined;
}

function isSelf(self: string | undefined, actor: unknown): boolean {
  return isObject(actor) && typeof actor.id === 'string' && actor.id.toLowerCase() === self;
}

/**
 * The receiver's check of a checked, authentic delivery, made before its claim: undefined when
 * nothing is ignored, so that a webhook without the option pays nothing per delivery.
 */
export function ignoreRule(ignore: IgnoreSettings | undefined): ((delivery: Delivery) => IgnoreReason | undefined) | undefined {
  if (ignore === undefined || (ignore.self === undefined && !ignore.bots && !ignore.rules)) return undefined;
  return (delivery) => ignoredBy(ignore, delivery.payload);
}

/** `ignore.self`: a bot token (only its bot id is kept) or a bot user id. The value is never quoted back. */
const selfOption = customOption<string | undefined>({
  doc: "This bot's own changes: its bot token (only the bot id is read from it, offline) or its bot user id; events whose `actor.id` is that bot are ignored.",
  type: 'string',
  defaultText: 'none',
  bounds: 'a bot token `svc_bot_<bot id>_<43 characters>` or a bot user id (UUID)',
  read(value, name) {
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw new TypeError(`svc-webhooks: \`${name}\` must be the bot's token or its user id (a UUID); got ${kindOf(value)}`);
    if (isUuid(value)) return value.toLowerCase();
    const token = parseBotToken(value);
    if (token !== undefined) return token.botId;
    throw new TypeError(
      `svc-webhooks: \`${name}\` must be the bot's token (svc_bot_<bot id>_<43 characters>) or its user id (a UUID); got ${kindOf(value)}: ${botTokenProblem(value)}`,
    );
  },
});

/** The options of `ignore`, declared once (docs/options.md is made from them). */
export const IGNORE_OPTIONS = {
  self: selfOption,
  bots: booleanOption({ doc: "Every bot's changes (`actor.is_bot` true), this bot's included.", default: false }),
  rules: booleanOption({ doc: 'Changes made by automation rules (`rule` set, `actor` null).', default: false }),
};

/** Reads `ignore` through its table; errors name `ignore.self`, `ignore.bots`, `ignore.rules`. */
export function ignoreSettings(value: unknown, factory: string): IgnoreSettings {
  return readOptions(IGNORE_OPTIONS, value, { factory, prefix: 'ignore.' });
}
