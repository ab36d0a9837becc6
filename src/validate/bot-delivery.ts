import { SvcWebhookError } from '../errors';
import type { BotWebhookUpdate } from '../generated/bot-types';
import type { BotDelivery } from '../internal/delivery/delivery';
import { DEFAULT_RETENTION_MS } from '../internal/delivery/svc-limits';
import { canonicalDeliveryId, checkHeaderMatches, isObject, malformed, type DeliveryCheck } from './delivery-checks';

const DELIVERY_HEADER = { name: 'x-svc-delivery', shown: 'X-Svc-Delivery', code: 'delivery_id_mismatch' } as const;

/**
 * A bot update older than this is refused: its id may already be forgotten by the de-dup store,
 * so accepting it would let a captured delivery be replayed. It equals the store's retention.
 */
export const BOT_UPDATE_MAX_AGE_MS = DEFAULT_RETENTION_MS;

/**
 * How far ahead of this receiver's clock an update's `createdAt` may be (clock skew, as the board
 * webhook's timestamp tolerance): an update dated later would stay "young" past the store's memory
 * of its id, so a capture of it could be replayed.
 */
export const BOT_UPDATE_FUTURE_MS = 5 * 60 * 1000;

/**
 * The checks of a bot update that hold whatever the schema policy, and the delivery they describe.
 * `maxAgeMs`: the oldest `createdAt` accepted, no longer than the store remembers ids.
 */
export function botDeliveryCheck(maxAgeMs: number): DeliveryCheck<BotDelivery> {
  return (payload, { request, verified, nowMs }) => {
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
    if (createdAt - nowMs > BOT_UPDATE_FUTURE_MS) {
      throw new SvcWebhookError('timestamp_out_of_tolerance', `\`createdAt\` is more than ${BOT_UPDATE_FUTURE_MS / 1000} s ahead of this receiver's clock`);
    }
    const id = canonicalDeliveryId(payload.id);
    checkHeaderMatches(request, DELIVERY_HEADER, id, canonicalDeliveryId);
    const named = typeof payload.botUserId === 'string' ? payload.botUserId : '';
    // With a resolver the path's bot verified the update: it must be that bot's.
    if (verified.by !== undefined && canonicalDeliveryId(named) !== canonicalDeliveryId(verified.by)) {
      throw new SvcWebhookError('bot_id_mismatch', "the update's `botUserId` is not the bot its path names");
    }
    const botId = verified.by ?? named;
    // A command names the bot it is addressed to: only that bot's secret may deliver it.
    const command = isObject(data.message) ? data.message.command : undefined;
    if (isObject(command) && typeof command.botUserId === 'string' && canonicalDeliveryId(command.botUserId) !== canonicalDeliveryId(botId)) {
      throw new SvcWebhookError('bot_id_mismatch', "the command's `botUserId` is not the bot the update is for");
    }
    return { id, kind: kinds[0]!, payload, update: payload as unknown as BotWebhookUpdate, data, verifiedBy: verified.by, botId };
  };
}
