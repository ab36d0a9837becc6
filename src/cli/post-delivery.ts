import { signBoardEvent, signBotUpdate } from '../testing/sign-delivery';
import type { CliIo } from './cli-io';
import type { Delivery } from './load-delivery';

/** svc counts a delivery as failed when no 2xx arrives within 10 seconds. */
export const SENDER_TIMEOUT_MS = 10_000;
const MAX_ERROR_BODY = 64 * 1024;

export interface AttemptOutcome {
  readonly ok: boolean;
  /** A 2xx whose JSON body says `"duplicate": true`: the receiver had this delivery id already. */
  readonly duplicate?: boolean;
  readonly durationMs: number;
  readonly status?: number;
  /** The `code` of an svc-webhooks JSON error body, when the receiver sent one. */
  readonly code?: string;
  /** The `message` of that body: the receiver's own words, made safe for a terminal. */
  readonly message?: string;
  /** Where a redirect pointed; redirects are not followed. */
  readonly location?: string;
  /** Why no response arrived: a timeout or a connection error. */
  readonly error?: string;
  /** The system error code of a connection error (ECONNREFUSED, ENOTFOUND, ...). */
  readonly errorCode?: string;
}

const MAX_MESSAGE = 300;

/** Headers as svc sends them; a board delivery is signed afresh for each attempt, with the time of sending. */
function sign(delivery: Delivery, secret: string): { body: string; headers: Record<string, string> } {
  if (delivery.webhook === 'board') {
    const options = {
      secret,
      ...(delivery.id === undefined ? {} : { deliveryId: delivery.id }),
      ...(delivery.kind === undefined ? {} : { eventType: delivery.kind }),
    };
    return signBoardEvent(delivery.body, options);
  }
  return signBotUpdate(delivery.body, { secret, ...(delivery.id === undefined ? {} : { deliveryId: delivery.id }) });
}

/** Whether a 2xx body is svc-webhooks' answer to a repeat, `{"ok":true,"duplicate":true}`. */
async function duplicateAnswer(response: Response): Promise<boolean> {
  try {
    const text = await response.text();
    if (text.length > MAX_ERROR_BODY) return false;
    return (JSON.parse(text) as { duplicate?: unknown } | null)?.duplicate === true;
  } catch {
    return false;
  }
}

/** The `code` and `message` of an svc-webhooks JSON error body, when the receiver sent one. */
async function errorBody(response: Response): Promise<{ code?: string; message?: string }> {
  try {
    const text = await response.text();
    if (text.length > MAX_ERROR_BODY) return {};
    const body = JSON.parse(text) as { code?: unknown; message?: unknown } | null;
    return {
      ...(typeof body?.code === 'string' ? { code: terminalSafe(body.code) } : {}),
      ...(typeof body?.message === 'string' ? { message: terminalSafe(body.message) } : {}),
    };
  } catch {
    return {};
  }
}

/** Any receiver's text on one short line, with no control or direction characters left to act on a terminal. */
function terminalSafe(text: string): string {
  // oxlint-disable-next-line no-control-regex -- control characters are what it removes from a receiver's text
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g, ' ').trim();
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE)}…` : line;
}

function connectionError(err: unknown, timeoutMs: number): string {
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return `connection failed (${cause.code})`;
  return `connection failed (${typeof cause?.message === 'string' ? cause.message : String(err)})`;
}

/** Where a delivery goes, signed with which secret, and how long the sender waits for an answer. */
export interface DeliveryTarget {
  readonly url: string;
  readonly delivery: Delivery;
  readonly secret: string;
  /** Default: svc's own 10 s. */
  readonly timeoutMs?: number;
  /** Sent besides svc's own (a replay names its delivery in X-Svc-Webhooks-Replay). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** One delivery attempt, like svc's sender: POST, 10 s deadline, redirects not followed. */
export async function postDelivery(
  io: CliIo,
  { url, delivery, secret, timeoutMs = SENDER_TIMEOUT_MS, headers: extra }: DeliveryTarget,
): Promise<AttemptOutcome> {
  const signed = sign(delivery, secret);
  const { body } = signed;
  const headers = extra === undefined ? signed.headers : { ...signed.headers, ...extra };
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const duration = (): number => performance.now() - started;
  let response: Response;
  try {
    response = await io.fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal });
  } catch (err) {
    const code = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
    return {
      ok: false,
      durationMs: duration(),
      error: connectionError(err, timeoutMs),
      ...(typeof code === 'string' ? { errorCode: code } : {}),
    };
  }
  const durationMs = duration();
  const status = response.status;
  if (status >= 200 && status < 300) return { ok: true, status, durationMs, ...((await duplicateAnswer(response)) ? { duplicate: true } : {}) };
  if (status >= 300 && status < 400) {
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get('location');
    return { ok: false, status, durationMs, ...(location === null ? {} : { location }) };
  }
  return { ok: false, status, durationMs, ...(await errorBody(response)) };
}
