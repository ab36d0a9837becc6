import { boardSignature, botSignature } from '../testing/sign-delivery';
import type { StoredDelivery } from './relay-record';

/**
 * A stored delivery sent on to the developer's local receiver. Re-signed (the default) with the
 * local development secret and a fresh X-Svc-Timestamp, so that a delivery caught up after a
 * laptop slept passes the receiver's 300 s tolerance; the delivery id, the event and the body's
 * bytes stay svc's. Raw: the headers exactly as svc sent them, signature and timestamp included.
 */

/** svc's headers sent on with a re-signed delivery; the signature and timestamp are made afresh. */
const PASSED_ON = ['content-type', 'user-agent', 'x-svc-webhook-version', 'x-svc-event', 'x-svc-delivery'] as const;

/** The local development secret of each webhook; `raw` forwards svc's own headers instead. */
export type Signing = { readonly raw: true } | { readonly raw: false; readonly board: string | undefined; readonly bot: string | undefined };

export interface ForwardTarget {
  readonly board: string;
  readonly bot: string;
  readonly signing: Signing;
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
}

/** What the local receiver answered: a status (and its error code), or no answer and why. */
export interface ForwardResult {
  readonly status: number | undefined;
  readonly code?: string;
  readonly failure?: string;
  readonly durationMs: number;
}

/** The headers to send `delivery` with; undefined when there is no local secret for its webhook. */
export function forwardHeaders(delivery: StoredDelivery, signing: Signing, nowMs: number): Record<string, string> | undefined {
  if (signing.raw) return { ...delivery.headers };
  const secret = signing[delivery.webhook];
  if (secret === undefined) return undefined;
  const headers: Record<string, string> = {};
  for (const name of PASSED_ON) {
    const value = delivery.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  if (delivery.webhook === 'board') {
    const timestamp = Math.floor(nowMs / 1000);
    headers['x-svc-timestamp'] = String(timestamp);
    headers['x-svc-signature'] = boardSignature(secret, timestamp, delivery.body);
  } else headers['x-svc-signature'] = botSignature(secret, delivery.body);
  return headers;
}

/** The code of a receiver's JSON answer (`{"ok":false,"code":"signature_mismatch"}`), if it has one. */
function answerCode(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { code?: unknown }).code;
    return typeof code === 'string' && /^[a-z_]{1,64}$/.test(code) ? code : undefined;
  } catch {
    return undefined;
  }
}

function failureOf(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code === 'ECONNREFUSED' ? 'connection refused' : cause.code;
  if ((err as Error).name === 'TimeoutError') return 'no answer in time';
  return 'no answer';
}

/** POSTs the delivery once, as svc's sender does: redirects not followed, a deadline. */
export async function forward(delivery: StoredDelivery, target: ForwardTarget): Promise<ForwardResult> {
  const started = Date.now();
  const headers = forwardHeaders(delivery, target.signing, started);
  if (headers === undefined) return { status: undefined, failure: `no local ${delivery.webhook} webhook secret`, durationMs: 0 };
  try {
    const res = await target.fetch(delivery.webhook === 'board' ? target.board : target.bot, {
      method: 'POST',
      headers,
      body: delivery.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(target.timeoutMs),
    });
    const text = await res.text().catch(() => '');
    const code = res.ok ? undefined : answerCode(text.slice(0, 4096));
    return { status: res.status, ...(code === undefined ? {} : { code }), durationMs: Date.now() - started };
  } catch (err) {
    return { status: undefined, failure: failureOf(err), durationMs: Date.now() - started };
  }
}
