import type { BotEventData, BotEventMap } from '../generated/bot-types';
import { botEventKinds } from '../generated/bot-types';
import { commonMethods, listeners, type WebhookMiddlewareBase } from './webhook-methods';
import { expressMiddleware } from '../adapters/node/express-middleware';
import { settings, type BotWebhookOptions } from './options';
import { botJobs } from '../receive/webhook-jobs';
import { webhookInbox } from './webhook-inbox';
import { BOT_UPDATE_MAX_AGE_MS, botProtocol } from '../receive/bot-protocol';
import { Receiver } from '../receive/receiver';
import { HandlerRegistry } from '../route/handler-registry';
import type { BotHandler, CommandData } from '../route/handler-types';

export type BotEventKind = keyof BotEventMap;

export interface BotWebhookMiddleware extends WebhookMiddlewareBase<BotHandler<BotEventData>> {
  /** Runs `handler` with `update.event[kind]` for every delivery of the given kind(s). */
  on<K extends BotEventKind>(kind: K | readonly K[], handler: BotHandler<BotEventMap[K]>): this;
  /** Runs `handler` with the `messageCreate` data when `message.command.name === name`; `message.command` is then always set. */
  command(name: string | readonly string[], handler: BotHandler<CommandData>): this;
}

const KNOWN_KINDS = new Set<string>(botEventKinds);

/** The bot webhook receiver: `app.use(svcBotWebhook(secret))`. */
export function svcBotWebhook(secretOrOptions: string | readonly string[] | BotWebhookOptions): BotWebhookMiddleware {
  const config = settings(secretOrOptions, 'bot');
  const byKind = new HandlerRegistry<BotHandler<never>>();
  const byCommand = new HandlerRegistry<BotHandler<CommandData>>();
  const lists = listeners<BotHandler<never>>();
  // A replayed update must not outlive the store's memory of its id.
  const maxAgeMs = Math.min(BOT_UPDATE_MAX_AGE_MS, config.store.retentionMs ?? Number.POSITIVE_INFINITY);
  const protocol = botProtocol(config.secrets, config.pattern, { byKind, byCommand, any: lists.any }, maxAgeMs);
  const inbox = webhookInbox(config, protocol, config.inbox && botJobs(config.pattern, config.secrets.lookup !== undefined), lists.deliveryListeners);
  const receiver = new Receiver(protocol, config, lists.errorHandlers, lists.deliveryListeners, inbox.handoff);
  const middleware = expressMiddleware('svcBotWebhook', receiver) as BotWebhookMiddleware;
  return Object.assign(middleware, commonMethods(middleware, { lists, inbox, closeReceiver: () => receiver.close(), flushLog: config.flushLog }), {
    path: config.path,
    forgetSecret(id: string) {
      config.secrets.lookup?.forget(id);
      return middleware;
    },
    on(kind: string | readonly string[], handler: BotHandler<never>) {
      byKind.add(kind, handler, (k) => {
        if (!KNOWN_KINDS.has(k)) throw new TypeError(`svc-webhooks: unknown bot event kind "${k}"; handle kinds this version does not know with onAny()`);
      });
      return middleware;
    },
    command(name: string | readonly string[], handler: BotHandler<CommandData>) {
      byCommand.add(name, handler, (n) => {
        if (typeof n !== 'string' || n === '') throw new TypeError('svc-webhooks: a command name must be a non-empty string');
      });
      return middleware;
    },
  });
}
