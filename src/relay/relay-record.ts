/**
 * One delivery as the relay keeps it: the raw body and the headers of svc's that re-verify it, with
 * the relay's sequence number. The body is the exact text svc signed (verified JSON is UTF-8, so the
 * text round-trips to the same bytes).
 */

export type WebhookKind = 'board' | 'bot';

/** svc's headers a stored delivery keeps: enough to forward it as svc sent it (`listen --raw`). */
export const KEPT_HEADERS = [
  'content-type',
  'user-agent',
  'x-svc-webhook-version',
  'x-svc-event',
  'x-svc-delivery',
  'x-svc-timestamp',
  'x-svc-signature',
] as const;

/** A verified delivery, before the store gives it its sequence number. */
export interface IncomingDelivery {
  readonly webhook: WebhookKind;
  /** The delivery id (X-Svc-Delivery, the body's `id`). */
  readonly id: string;
  /** The board event type or the bot event kind. */
  readonly type: string;
  /** The board (board webhook) or bot user (bot webhook) the delivery is for. */
  readonly scope: string;
  /** When the relay stored it, in ms since the epoch. */
  readonly receivedAt: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface StoredDelivery extends IncomingDelivery {
  readonly seq: number;
}

/** A stored delivery as one line of JSON (no raw newline: JSON.stringify escapes them). */
export function encodeRecord(record: StoredDelivery): string {
  return JSON.stringify(record);
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}

/** A stored delivery read back, or undefined when the text is not one (a corrupt line). */
export function decodeRecord(text: string): StoredDelivery | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  const ok =
    Number.isSafeInteger(r.seq) &&
    (r.seq as number) > 0 &&
    (r.webhook === 'board' || r.webhook === 'bot') &&
    typeof r.id === 'string' &&
    typeof r.type === 'string' &&
    typeof r.scope === 'string' &&
    typeof r.receivedAt === 'number' &&
    typeof r.body === 'string' &&
    isStringRecord(r.headers);
  return ok ? (value as StoredDelivery) : undefined;
}

/** The headers of a request that a stored delivery keeps, each once. */
export function keptHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string') kept[name] = value;
  }
  return kept;
}
