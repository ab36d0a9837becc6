import { tooLarge } from '../capture/body-bounds';
import { boardEventTypes, type BoardEventMap, type BoardEventType, type BoardUnknownEvent } from '../generated/board-types';
import { botEventKinds, type BotEventData, type BotEventMap, type BotWebhookUpdate } from '../generated/bot-types';
import type { HeaderSource } from '../internal/request/headers';
import { pathPattern } from '../internal/request/path-pattern';
import { choiceOption, customOption, kindOf, readOptions, type ReadOptions } from '../internal/checks/option-table';
import type { SecretSource } from '../verify/secret-source';
import { DEFAULT_PATHS, maxBodyBytesOption, toleranceSecondsOption } from './webhook-options';
import { parseJson } from '../parse/parse-json';
import type { Delivery } from '../internal/delivery/delivery';
import { boardDelivery } from '../validate/board-delivery';
import { BOT_UPDATE_MAX_AGE_MS, botDeliveryCheck } from '../validate/bot-delivery';
import type { DeliveryCheck } from '../validate/delivery-checks';
import { boardVerifier, botVerifier, type Verifier } from '../verify/verify-signature';
import type { RequestFacts } from '../internal/request/request-access';
import { schemaRefusal, type SchemaName } from '../validate/delivery-checks';
import { secretKeys } from '../verify/secret-keys';

/** The input of `verifyBotDelivery`: the raw body, the headers and the secret. */
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
  maxBodyBytes?: number | string;
  /** 'reject' (default) throws schema_violation for a delivery that fails the schema; 'skip' does not validate. */
  schemaPolicy?: 'reject' | 'skip';
}

/** The input of `verifyBoardDelivery`: the bot input and the timestamp tolerance. */
export interface VerifyBoardDeliveryInput extends VerifyDeliveryInput {
  /** Largest distance between X-Svc-Timestamp and now, either way, in seconds; default 300. */
  toleranceSeconds?: number;
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
  | {
      [K in keyof BotEventMap]: {
        readonly deliveryId: string;
        readonly known: true;
        readonly kind: K;
        readonly data: BotEventMap[K];
        readonly update: BotWebhookUpdate;
      };
    }[keyof BotEventMap]
  | { readonly deliveryId: string; readonly known: false; readonly kind: string; readonly data: BotEventData; readonly update: BotWebhookUpdate };

const encoder = new TextEncoder();

/** The declaration of every field of `verifyBotDelivery`'s input (docs/options.md is made from it). */
export const VERIFY_BOT_INPUT = {
  body: customOption<Uint8Array>({
    doc: 'The raw body exactly as it was received: the signature is over these bytes.',
    type: 'string | Uint8Array',
    bounds: 'required; not parsed JSON',
    read(value, name) {
      if (typeof value === 'string') return encoder.encode(value);
      // A Buffer is a Uint8Array.
      if (value instanceof Uint8Array) return value;
      throw new TypeError(`svc-webhooks: \`${name}\` must be the raw body as a string, Uint8Array or Buffer (not parsed JSON); got ${kindOf(value)}`);
    },
  }),
  headers: customOption<RequestFacts>({
    doc: "The request headers: a Fetch `Headers`, Node's `req.headers` or `req` itself, or a plain object.",
    type: 'Headers | IncomingHttpHeaders | Record<string, string>',
    bounds: 'required',
    read(value, name) {
      if (typeof value !== 'object' || value === null)
        throw new TypeError(`svc-webhooks: \`${name}\` must be a Headers or an object of header values; got ${kindOf(value)}`);
      // Headers alone, or a request that has them: either is read as the receivers read a request.
      return value as RequestFacts;
    },
  }),
  secret: customOption<unknown>({
    doc: 'The webhook secret, or several while a rotation is under way.',
    type: 'string | string[]',
    bounds: 'required; 16 to 256 characters each',
    read: (value) => value,
  }),
  now: customOption<number | undefined>({
    doc: 'Now, in ms since the epoch.',
    type: 'number',
    defaultText: '`Date.now()`',
    read(value, name) {
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value)))
        throw new TypeError(`svc-webhooks: \`${name}\` must be ms since the epoch; got ${kindOf(value)}`);
      return value as number | undefined;
    },
  }),
  maxBodyBytes: maxBodyBytesOption,
  schemaPolicy: choiceOption<'reject' | 'skip'>({
    doc: 'A delivery that fails the schema throws `schema_violation` (reject), or is not validated (skip).',
    choices: ['reject', 'skip'],
    default: 'reject',
  }),
};

/** The declaration of every field of `verifyBoardDelivery`'s input. */
export const VERIFY_BOARD_INPUT = { ...VERIFY_BOT_INPUT, toleranceSeconds: toleranceSecondsOption };

const RENAMED = { limit: 'maxBodyBytes', tolerance: 'toleranceSeconds' };

const KNOWN_TYPES = new Set<string>(boardEventTypes);
const KNOWN_KINDS = new Set<string>(botEventKinds);
// One secret (or a rotation of it) for every delivery: no path names a board or bot.
const BOARD_PATH = pathPattern(DEFAULT_PATHS.board, []);
const BOT_PATH = pathPattern(DEFAULT_PATHS.bot, []);
const BOT_CHECK = botDeliveryCheck(BOT_UPDATE_MAX_AGE_MS);

/**
 * Verifies one board delivery without an HTTP framework (a queue consumer, a serverless function,
 * a custom router): the signature and timestamp, the size, the JSON and the schema, exactly as the
 * middleware checks them. Resolves to the typed event with its delivery id, or rejects with the
 * SvcWebhookError the middleware would answer with. De-duplication stays with the receivers. A
 * promise on every runtime: where there is no node:crypto, the HMAC is WebCrypto's, which is async.
 */
export async function verifyBoardDelivery(input: VerifyBoardDeliveryInput): Promise<VerifiedBoardDelivery> {
  // Stryker disable next-line ObjectLiteral,StringLiteral: they only word an unknown option's TypeError (test/mutation/EQUIVALENT.receive.md)
  const read = readOptions(VERIFY_BOARD_INPUT, input, { factory: 'verifyBoardDelivery', renamed: RENAMED });
  const { id, kind, event, timestamp, sequence } = await verify(read, {
    schema: 'board',
    verifier: (secrets) => boardVerifier({ secrets, pattern: BOARD_PATH, toleranceSeconds: read.toleranceSeconds }),
    check: boardDelivery,
  });
  return { deliveryId: id, known: KNOWN_TYPES.has(kind), type: kind, event, timestamp, sequence } as VerifiedBoardDelivery;
}

/** Verifies one bot update without an HTTP framework, as verifyBoardDelivery does a board event. */
export async function verifyBotDelivery(input: VerifyDeliveryInput): Promise<VerifiedBotDelivery> {
  // Stryker disable next-line ObjectLiteral,StringLiteral: they only word an unknown option's TypeError (test/mutation/EQUIVALENT.receive.md)
  const read = readOptions(VERIFY_BOT_INPUT, input, { factory: 'verifyBotDelivery', renamed: RENAMED });
  const { id, kind, data, update } = await verify(read, { schema: 'bot', verifier: (secrets) => botVerifier(secrets, BOT_PATH), check: BOT_CHECK });
  return { deliveryId: id, known: KNOWN_KINDS.has(kind), kind, data, update } as VerifiedBotDelivery;
}

/** The stages of one webhook that verification runs. */
interface VerifyStages<S, D> {
  readonly schema: SchemaName;
  readonly verifier: (secrets: SecretSource) => Verifier<S>;
  readonly check: DeliveryCheck<D>;
}

/** The receiver's stages in its order: signature headers, the size, the MAC, the JSON, the schema, the delivery. */
async function verify<S, D extends Delivery>(input: ReadOptions<typeof VERIFY_BOT_INPUT>, stages: VerifyStages<S, D>): Promise<D> {
  const verifier = stages.verifier({ keys: secretKeys(input.secret) });
  const now = input.now ?? Date.now();
  const request = input.headers;
  const signature = verifier.readSignature(request, now);
  if (input.body.length > input.maxBodyBytes) throw tooLarge(input.maxBodyBytes);
  // Synchronous on node:crypto, a promise on WebCrypto.
  const verified = await verifier.verify(signature, input.body, request);
  const payload = parseJson(input.body);
  const invalid = schemaRefusal(stages.schema, payload, input.schemaPolicy, undefined);
  if (invalid !== undefined) throw invalid;
  return stages.check(payload, { request, verified, nowMs: now });
}
