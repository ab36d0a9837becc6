import type { KeyObject } from 'node:crypto';
import type { BoardWebhookEvent } from '../generated/board-types';
import { HandlerRegistry } from '../route/handler-registry';
import { DeliveryScope } from '../route/delivery-scope';
import type { BoardContext, BoardHandler } from '../route/handler-types';
import type { HandlerCall } from '../route/run-handlers';
import { readBoardSignature, verifyBoardSignature, type BoardSignature } from '../verify/verify-signature';
import { canonicalDeliveryId } from './delivery-id';
import { checkHeaderMatches, isObject, malformed, type Delivery, type Protocol } from './protocol';

export interface BoardDelivery extends Delivery {
  readonly event: BoardWebhookEvent;
  readonly timestamp: number;
  readonly sequence: number;
}

export interface BoardHandlers {
  readonly byType: HandlerRegistry<BoardHandler<never>>;
  readonly any: BoardHandler<never>[];
}

export function boardProtocol(keys: readonly KeyObject[], toleranceSeconds: number, handlers: BoardHandlers): Protocol<BoardSignature, BoardDelivery> {
  return {
    webhook: 'board',
    schema: 'board',
    readSignature: (req, nowMs) => readBoardSignature(req, toleranceSeconds, nowMs),
    verify: (signature, body) => verifyBoardSignature(keys, signature, body),
    delivery(payload, req, signature) {
      if (!isObject(payload) || typeof payload.id !== 'string' || payload.id === '' || typeof payload.type !== 'string') {
        throw malformed('a board event must be an object with string `id` and `type`');
      }
      const sequence = sequenceNumber(payload.sequence);
      if (sequence === undefined) throw malformed('`sequence` must be a non-negative integer');
      // Handlers get the number, as the event type says; the body is verified, so this changes no check.
      if (payload.sequence !== sequence) payload.sequence = sequence;
      const id = canonicalDeliveryId(payload.id);
      checkHeaderMatches(req, 'x-svc-delivery', id, 'delivery_id_mismatch', 'X-Svc-Delivery', canonicalDeliveryId);
      checkHeaderMatches(req, 'x-svc-event', payload.type, 'event_type_mismatch', 'X-Svc-Event');
      return {
        id,
        kind: payload.type,
        payload,
        event: payload as unknown as BoardWebhookEvent,
        timestamp: signature.timestamp,
        sequence,
      };
    },
    context: (delivery, init) => new BoardDeliveryContext(delivery, init),
    calls(delivery, ctx) {
      const call = (h: BoardHandler<never>): HandlerCall => () => (h as BoardHandler)(delivery.event, ctx as BoardDeliveryContext);
      const own = handlers.byType.get(delivery.kind);
      return own.length === 0 ? handlers.any.map(call) : [...own.map(call), ...handlers.any.map(call)];
    },
  };
}

/** `sequence` is a number; a decimal string is accepted too (the spec's limits carry uint64 values as strings). */
export function sequenceNumber(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^[0-9]{1,15}$/.test(value) ? Number(value) : value;
  return Number.isSafeInteger(n) && (n as number) >= 0 ? (n as number) : undefined;
}

class BoardDeliveryContext extends DeliveryScope implements BoardContext {
  readonly webhook = 'board' as const;
  readonly type: string;
  readonly event: BoardWebhookEvent;
  readonly timestamp: number;
  readonly sequence: number;

  constructor(delivery: BoardDelivery, init: ConstructorParameters<typeof DeliveryScope>) {
    super(...init);
    this.type = delivery.kind;
    this.event = delivery.event;
    this.timestamp = delivery.timestamp;
    this.sequence = delivery.sequence;
  }
}
