import { createHmac } from 'node:crypto';

/**
 * Signing as the svc sender does it. Written from the spec, apart from src/verify, so that the
 * tests built on it check the verifier rather than mirror it.
 */

/** A request body and the headers svc sends with it. */
export interface SignedDelivery {
  /** The exact bytes that were signed; send them unchanged. */
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** How a test delivery is signed. */
export interface SignOptions {
  /** The webhook secret. */
  secret: string;
  /** X-Svc-Delivery; default the body's `id`. */
  deliveryId?: string;
}

/** How a test board event is signed: the secret, and the timestamp and event type headers. */
export interface BoardSignOptions extends SignOptions {
  /** X-Svc-Timestamp in Unix seconds; default now. Set it to test stale deliveries. */
  timestamp?: number;
  /** X-Svc-Event; default the body's `type`. */
  eventType?: string;
}

/** The User-Agent svc sends board deliveries with. */
export const BOARD_USER_AGENT = 'Svc-Webhook/1.0';
/** The User-Agent svc sends bot deliveries with. */
export const BOT_USER_AGENT = 'SvcBot-Webhook/1.0';

function hmacHex(secret: string, ...parts: string[]): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  for (const part of parts) mac.update(part, 'utf8');
  return mac.digest('hex');
}

/** `v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>`. */
export function boardSignature(secret: string, timestamp: number | string, body: string): string {
  return `v1=${hmacHex(secret, String(timestamp), '.', body)}`;
}

/** `sha256=<hex HMAC-SHA256(secret, body)>`. */
export function botSignature(secret: string, body: string): string {
  return `sha256=${hmacHex(secret, body)}`;
}

/** An object is sent as compact JSON; a string is sent (and signed) byte for byte. */
function bodyOf(payload: unknown): { body: string; fields: Record<string, unknown> } {
  if (typeof payload === 'string') {
    try {
      const parsed: unknown = JSON.parse(payload);
      return { body: payload, fields: typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {} };
    } catch {
      return { body: payload, fields: {} };
    }
  }
  return { body: JSON.stringify(payload), fields: (payload ?? {}) as Record<string, unknown> };
}

function requireSecret(options: SignOptions | undefined): string {
  if (typeof options?.secret !== 'string') throw new TypeError('svc-webhooks/testing: pass { secret } to sign a delivery');
  return options.secret;
}

function optionalHeader(headers: Record<string, string>, name: string, value: unknown): void {
  if (typeof value === 'string' || typeof value === 'number') headers[name] = String(value);
}

/** Signs a board event with every header the board webhook sender sends. */
export function signBoardEvent(event: object | string, options: BoardSignOptions): SignedDelivery {
  const secret = requireSecret(options);
  const { body, fields } = bodyOf(event);
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(timestamp)) throw new TypeError('svc-webhooks/testing: `timestamp` is whole Unix seconds');
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': BOARD_USER_AGENT,
    'X-Svc-Webhook-Version': '1',
  };
  optionalHeader(headers, 'X-Svc-Event', options.eventType ?? fields.type);
  optionalHeader(headers, 'X-Svc-Delivery', options.deliveryId ?? fields.id);
  headers['X-Svc-Timestamp'] = String(timestamp);
  headers['X-Svc-Signature'] = boardSignature(secret, timestamp, body);
  return { body, headers };
}

/** Signs a bot update with every header the bot webhook sender sends (no timestamp: the bot scheme has none). */
export function signBotUpdate(update: object | string, options: SignOptions): SignedDelivery {
  const secret = requireSecret(options);
  const { body, fields } = bodyOf(update);
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'User-Agent': BOT_USER_AGENT };
  optionalHeader(headers, 'X-Svc-Delivery', options.deliveryId ?? fields.id);
  headers['X-Svc-Signature'] = botSignature(secret, body);
  return { body, headers };
}
