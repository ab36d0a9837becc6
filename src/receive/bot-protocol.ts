import type { KeyObject } from 'node:crypto';
import { DEFAULT_RETENTION_MS } from '../dedup/delivery-store';
import { SvcWebhookError } from '../errors';
import type { BotWebhookUpdate } from '../generated/bot-types';
import { HandlerRegistry } from '../route/handler-registry';
import { DeliveryScope } from '../route/delivery-scope';
import type { BotContext, BotHandler, CommandData } from '../route/handler-types';
import type { HandlerCall } from '../route/run-handlers';
import { pathId, type PathPattern } from '../internal/path-pattern';
import { isThenable } from '../internal/thenable';
import type { SecretSource } from '../verify/secret-source';
import { readBotSignature, verifyBotSignature } from '../verify/verify-signature';
import { canonicalDeliveryId } from '../validate/delivery-id';
import { NO_SECRETS } from '../internal/log-redaction';
import { checkHeaderMatches, isObject, malformed, type Delivery, type Protocol } from './protocol';

/**
 * A bot update older than this is refused: its id may already be forgotten by the de-dup store,
 * so accepting it would let a captured delivery be replayed. It equals the store's retention.
 */
export const BOT_UPDATE_MAX_AGE_MS = DEFAULT_RETENTION_MS;

export interface BotDelivery extends Delivery {
  readonly update: BotWebhookUpdate;
  readonly data: Record<string, unknown>;
  /** With a resolver: the bot, named by the path, whose secret verified the delivery. */
  readonly verifiedBot: string | undefined;
}

export interface BotHandlers {
  readonly byKind: HandlerRegistry<BotHandler<never>>;
  readonly byCommand: HandlerRegistry<BotHandler<CommandData>>;
  readonly any: BotHandler<never>[];
}

/** `maxAgeMs`: the oldest `createdAt` accepted; no longer than the store remembers ids. */
export function botProtocol(secrets: SecretSource, pattern: PathPattern, handlers: BotHandlers, maxAgeMs: number): Protocol<Buffer, BotDelivery> {
  const { keys, lookup } = secrets;
  return {
    webhook: 'bot',
    schema: 'bot',
    readSignature: (request) => readBotSignature(request),
    verify(claimed, body, request) {
      if (keys !== undefined) return verifyBotSignature(keys, claimed, body);
      // A bot update names no bot to trust before it is verified: the path says which bot's secret to use.
      const botId = pathId(pattern, request);
      if (botId === undefined) throw new SvcWebhookError('unknown_bot', 'the request path names no bot');
      const found = lookup.keysFor(botId);
      if (isThenable<readonly KeyObject[]>(found)) return Promise.resolve(found).then((k) => verifyBotSignature(k, claimed, body));
      return verifyBotSignature(found, claimed, body);
    },
    delivery(payload, request, _signature, nowMs) {
      if (!isObject(payload) || typeof payload.id !== 'string' || payload.id === '' || !isObject(payload.event)) {
        throw malformed('a bot update must be an object with a string `id` and an `event` object');
      }
      const kinds = Object.keys(payload.event);
      const data = payload.event[kinds[0]!];
      if (kinds.length !== 1 || !isObject(data)) throw malformed('`event` must have exactly one member, an object named after the event kind');
      const createdAt = typeof payload.createdAt === 'string' ? Date.parse(payload.createdAt) : Number.NaN;
      if (Number.isNaN(createdAt)) throw malformed('`createdAt` must be an ISO 8601 timestamp');
      if (nowMs - createdAt > maxAgeMs) {
        throw new SvcWebhookError('delivery_expired', 'the update is older than the sender retries deliveries; refused as a possible replay');
      }
      const id = canonicalDeliveryId(payload.id);
      checkHeaderMatches(request, 'x-svc-delivery', id, 'delivery_id_mismatch', 'X-Svc-Delivery', canonicalDeliveryId);
      const verifiedBot = lookup === undefined ? undefined : pathId(pattern, request);
      return { id, kind: kinds[0]!, payload, update: payload as unknown as BotWebhookUpdate, data, verifiedBot };
    },
    context: (delivery, init) => new BotDeliveryContext(delivery, init),
    secretsOf(delivery) {
      return lookup === undefined || delivery.verifiedBot === undefined ? NO_SECRETS : lookup.secretsOf(delivery.verifiedBot);
    },
    calls(delivery, ctx) {
      const call = (h: BotHandler<never>): HandlerCall => () => (h as BotHandler)(delivery.data, ctx as BotDeliveryContext);
      const calls = handlers.byKind.get(delivery.kind).map(call);
      const command = delivery.kind === 'messageCreate' ? commandName(delivery.data) : undefined;
      if (command !== undefined) calls.push(...handlers.byCommand.get(command).map(call as (h: BotHandler<CommandData>) => HandlerCall));
      for (const h of handlers.any) calls.push(call(h));
      return calls;
    },
  };
}

function commandName(data: Record<string, unknown>): string | undefined {
  const message = data.message;
  if (!isObject(message) || !isObject(message.command)) return undefined;
  return typeof message.command.name === 'string' ? message.command.name : undefined;
}

class BotDeliveryContext extends DeliveryScope implements BotContext {
  readonly webhook = 'bot' as const;
  readonly kind: string;
  readonly update: BotWebhookUpdate;

  constructor(delivery: BotDelivery, init: ConstructorParameters<typeof DeliveryScope>) {
    super(...init);
    this.kind = delivery.kind;
    this.update = delivery.update;
  }
}
