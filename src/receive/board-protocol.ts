import type { KeyObject } from 'node:crypto';
import type { BoardWebhookEvent } from '../generated/board-types';
import { HandlerRegistry } from '../route/handler-registry';
import type { BoardContext, BoardHandler } from '../route/handler-types';
import type { HandlerCall } from '../route/run-handlers';
import { readBoardSignature, verifyBoardSignature, type BoardSignature } from '../verify/verify-signature';
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
      checkHeaderMatches(req, 'x-svc-delivery', payload.id, 'delivery_id_mismatch', 'X-Svc-Delivery');
      checkHeaderMatches(req, 'x-svc-event', payload.type, 'event_type_mismatch', 'X-Svc-Event');
      return {
        id: payload.id,
        kind: payload.type,
        payload,
        event: payload as unknown as BoardWebhookEvent,
        timestamp: signature.timestamp,
        sequence,
      };
    },
    calls(delivery, base) {
      const ctx: BoardContext = { ...base, webhook: 'board', type: delivery.kind, event: delivery.event, timestamp: delivery.timestamp, sequence: delivery.sequence };
      const call = (h: BoardHandler<never>): HandlerCall => () => (h as BoardHandler)(delivery.event, ctx);
      return [...handlers.byType.get(delivery.kind).map(call), ...handlers.any.map(call)];
    },
  };
}

/** `sequence` is a number; a decimal string is accepted too (the spec's limits carry uint64 values as strings). */
export function sequenceNumber(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^[0-9]{1,15}$/.test(value) ? Number(value) : value;
  return Number.isSafeInteger(n) && (n as number) >= 0 ? (n as number) : undefined;
}
