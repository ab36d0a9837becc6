import type { BotEventData, BotEventMap } from '../generated/bot-types';
import { botEventKinds } from '../generated/bot-types';
import { botJobs } from '../inbox/webhook-jobs';
import { HandlerRegistry, botRoute } from '../route/delivery-route';
import type { BotHandler, CommandData } from '../route/handler-types';
import { BOT_UPDATE_MAX_AGE_MS, botDeliveryCheck } from '../validate/bot-delivery';
import { botVerifier } from '../verify/verify-signature';
import { assembleWebhook } from './assemble-webhook';
import { settings, type BotWebhookOptions } from './webhook-settings';
import { listeners, type WebhookMiddlewareBase } from './webhook-methods';

/** A bot event kind the spec names. */
export type BotEventKind = keyof BotEventMap;

/** The bot webhook: an Express middleware (also a node:http handler) with its handler registration. */
export interface BotWebhookMiddleware extends WebhookMiddlewareBase<BotHandler<BotEventData>> {
  /** Runs `handler` with `update.event[kind]` for every delivery of the given kind(s). */
  on<K extends BotEventKind>(kind: K | readonly K[], handler: BotHandler<BotEventMap[K]>): this;
  /** Runs `handler` with the `messageCreate` data when `message.command.name === name`; `message.command` is then always set. */
  command(name: string | readonly string[], handler: BotHandler<CommandData>): this;
}

const KNOWN_KINDS = new Set<string>(botEventKinds);

/**
 * The bot webhook receiver: `app.use(svcBotWebhook(secret))`. It verifies each update's `sha256=`
 * signature, validates it, claims its id once, and runs the handlers of its kind and command.
 */
export function svcBotWebhook(secretOrOptions: string | readonly string[] | BotWebhookOptions): BotWebhookMiddleware {
  const config = settings(secretOrOptions, 'bot');
  const byKind = new HandlerRegistry<BotHandler<never>>();
  const byCommand = new HandlerRegistry<BotHandler<CommandData>>();
  const lists = listeners<BotHandler<never>>();
  // A replayed update must not outlive the store's memory of its id.
  const maxAgeMs = Math.min(BOT_UPDATE_MAX_AGE_MS, config.store.retentionMs ?? Number.POSITIVE_INFINITY);
  const protocol = {
    webhook: 'bot' as const,
    schema: 'bot' as const,
    verifier: botVerifier(config.secrets, config.pattern),
    check: botDeliveryCheck(maxAgeMs),
    route: botRoute({ byKind, byCommand, any: lists.any }),
  };
  const webhook = assembleWebhook({
    name: 'svcBotWebhook',
    settings: config,
    protocol,
    jobs: config.inbox && botJobs(),
    lists,
  }) as unknown as BotWebhookMiddleware;
  return Object.assign(webhook, {
    on(eventKind: string | readonly string[], handler: BotHandler<never>) {
      byKind.add(eventKind, handler, (k) => {
        if (!KNOWN_KINDS.has(k)) throw new TypeError(`svc-webhooks: unknown bot event kind "${k}"; handle kinds this version does not know with onAny()`);
      });
      return webhook;
    },
    command(name: string | readonly string[], handler: BotHandler<CommandData>) {
      byCommand.add(name, handler, (n) => {
        if (typeof n !== 'string' || n === '') throw new TypeError('svc-webhooks: a command name must be a non-empty string');
      });
      return webhook;
    },
  });
}
