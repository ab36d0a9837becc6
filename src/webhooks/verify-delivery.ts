import { tooLarge } from '../capture/body-bounds';
import { boardEventTypes, type BoardEventMap, type BoardEventType, type BoardUnknownEvent } from '../generated/board-types';
import { botEventKinds, type BotEventData, type BotEventMap, type BotWebhookUpdate } from '../generated/bot-types';
import type { HeaderSource } from '../internal/headers';
import { pathPattern } from '../internal/path-pattern';
import { bodyLimit, DEFAULT_PATHS, toleranceOption, type SecretSource } from './options';
import { parseJson } from '../parse/parse-json';
import { boardProtocol } from '../receive/board-protocol';
import { BOT_UPDATE_MAX_AGE_MS, botProtocol } from '../receive/bot-protocol';
import type { Delivery, Protocol } from '../receive/protocol';
import type { RequestFacts } from '../internal/request-access';
import { schemaRefusal } from '../validate/validate-payload';
import { HandlerRegistry } from '../route/handler-registry';
import { secretKeys } from '../verify/secret-keys';

export interface VerifyDeliveryInput {
  /** The raw body exactly as it was received: the signature is over these bytes. */
  body: string | Uint8Array;
  /** The request headers: a Fetch `Headers`, Node's `req.headers` or `req` itself, or a plain object. */
  headers: HeaderSource;
  /** The webhook secret, or several while a rotation is under way. */
  secret: string | readonly string[];
  /** Now, in ms since the epoch; default `Date.now()`. */
  now?: number;
  /** Largest body accepted, in bytes or as '512kb'; default 512 KiB, at least 256 KiB. */
  limit?: number | string;
  /** 'reject' (default) throws schema_violation for a delivery that fails the schema; 'skip' does not validate. */
  schemaPolicy?: 'reject' | 'skip';
}

export interface VerifyBoardDeliveryInput extends VerifyDeliveryInput {
  /** Largest distance between X-Svc-Timestamp and now, either way, in seconds; default 300. */
  tolerance?: number;
}

interface BoardDeliveryFields {
  readonly deliveryId: string;
  /** The verified X-Svc-Timestamp, in seconds since the epoch. */
  readonly timestamp: number;
  /** The board's sequence number, for ordering (0 for ping). */
  readonly sequence: number;
}

/**
 * A verified board delivery. `known` tells a type the spec names from one this version does not
 * know; with it, `type` narrows `event`: `if (d.known && d.type === 'task.created') d.event.task`.
 */
export type VerifiedBoardDelivery =
  | { [T in BoardEventType]: BoardDeliveryFields & { readonly known: true; readonly type: T; readonly event: BoardEventMap[T] } }[BoardEventType]
  | (BoardDeliveryFields & { readonly known: false; readonly type: string; readonly event: BoardUnknownEvent });

/** A verified bot update; with `known`, `kind` narrows `data` (the member `update.event[kind]`). */
export type VerifiedBotDelivery =
  | { [K in keyof BotEventMap]: { readonly deliveryId: string; readonly known: true; readonly kind: K; readonly data: BotEventMap[K]; readonly update: BotWebhookUpdate } }[keyof BotEventMap]
  | { readonly deliveryId: string; readonly known: false; readonly kind: string; readonly data: BotEventData; readonly update: BotWebhookUpdate };

const KNOWN_TYPES = new Set<string>(boardEventTypes);
const KNOWN_KINDS = new Set<string>(botEventKinds);
// The verifiers route nothing: their protocols get no handlers. (Nothing reads these tables or the
// allowed parameter names below, so their contents are not mutated: test/mutation/EQUIVALENT.md.)
// Stryker disable ObjectLiteral,ArrayDeclaration
const NO_BOARD_HANDLERS = { byType: new HandlerRegistry<never>(), any: [] };
const NO_BOT_HANDLERS = { byKind: new HandlerRegistry<never>(), byCommand: new HandlerRegistry<never>(), any: [] };
// One secret (or a rotation of it) for every delivery: no path names a board or bot.
const BOARD_PATH = pathPattern(DEFAULT_PATHS.board, []);
const BOT_PATH = pathPattern(DEFAULT_PATHS.bot, []);
// Stryker restore ObjectLiteral,ArrayDeclaration

/**
 * Verifies one board delivery without an HTTP framework (a queue consumer, a serverless function,
 * a custom router): the signature and timestamp, the size, the JSON and the schema, exactly as the
 * middleware checks them. Returns the typed event with its delivery id, or throws the
 * SvcWebhookError the middleware would answer with. De-duplication stays with the receivers.
 */
export function verifyBoardDelivery(input: VerifyBoardDeliveryInput): VerifiedBoardDelivery {
  const { id, kind, event, timestamp, sequence } = verify(input, (secrets) => boardProtocol(secrets, BOARD_PATH, toleranceOption(input.tolerance), NO_BOARD_HANDLERS));
  return { deliveryId: id, known: KNOWN_TYPES.has(kind), type: kind, event, timestamp, sequence } as VerifiedBoardDelivery;
}

/** Verifies one bot update without an HTTP framework, as verifyBoardDelivery does a board event. */
export function verifyBotDelivery(input: VerifyDeliveryInput): VerifiedBotDelivery {
  const { id, kind, data, update } = verify(input, (secrets) => botProtocol(secrets, BOT_PATH, NO_BOT_HANDLERS, BOT_UPDATE_MAX_AGE_MS));
  return { deliveryId: id, known: KNOWN_KINDS.has(kind), kind, data, update } as VerifiedBotDelivery;
}

/** The receiver's stages in its order: signature headers, the size, the MAC, the JSON, the schema, the delivery. */
function verify<S, D extends Delivery>(input: VerifyDeliveryInput, protocolFor: (secrets: SecretSource) => Protocol<S, D>): D {
  if (typeof input !== 'object' || input === null) throw new TypeError('svc-webhooks: pass { body, headers, secret }');
  const protocol = protocolFor({ keys: secretKeys(input.secret) });
  const { schemaPolicy = 'reject' } = input;
  if (typeof input.headers !== 'object' || input.headers === null) throw new TypeError('svc-webhooks: `headers` must be a Headers or an object of header values');
  if (schemaPolicy !== 'reject' && schemaPolicy !== 'skip') throw new TypeError("svc-webhooks: `schemaPolicy` must be 'reject' or 'skip'");
  const now = input.now ?? Date.now();
  if (typeof now !== 'number' || !Number.isFinite(now)) throw new TypeError('svc-webhooks: `now` must be ms since the epoch');
  const limit = bodyLimit(input.limit);
  const body = bytesOf(input.body);
  // Headers alone, or a request that has them: either is read as the receivers read a request.
  const request = input.headers as RequestFacts;
  const signature = protocol.readSignature(request, now);
  if (body.length > limit) throw tooLarge(limit);
  // With fixed secrets the check is synchronous: nothing is awaited.
  void protocol.verify(signature, body, request);
  const payload = parseJson(body);
  const invalid = schemaRefusal(protocol.schema, payload, schemaPolicy, undefined);
  if (invalid !== undefined) throw invalid;
  return protocol.delivery(payload, request, signature, now);
}

function bytesOf(body: unknown): Buffer {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('svc-webhooks: `body` must be the raw body as a string, Uint8Array or Buffer (not parsed JSON)');
}
