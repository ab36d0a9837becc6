import { createHmac, timingSafeEqual } from 'node:crypto';
import { webhookSecretProblem } from '../client/webhook-secret';
import { canonicalDeliveryId } from '../validate/delivery-checks';
import type { Webhook } from './load-delivery';
import type { CapturedHeaders } from './read-capture';

/**
 * Explains why a captured request would fail signature verification. Where the receiver only
 * says "mismatch", this tries what commonly goes wrong (re-serialised JSON, an added newline,
 * a secret with a newline, the other webhook's scheme) and names the cause.
 */
export type DiagnosisCode =
  | 'signature_missing'
  | 'signature_duplicated'
  | 'signature_malformed'
  | 'timestamp_missing'
  | 'timestamp_malformed'
  | 'timestamp_out_of_tolerance'
  | 'secret_invalid'
  | 'body_changed'
  | 'wrong_secret'
  | 'delivery_id_mismatch'
  | 'event_type_mismatch';

export type Diagnosis =
  | { readonly ok: true; readonly webhook: Webhook; readonly summary: string }
  | { readonly ok: false; readonly code: DiagnosisCode; readonly reason: string };

export interface DiagnoseInput {
  readonly headers: CapturedHeaders;
  readonly body: Buffer;
  readonly secrets: readonly string[];
  readonly webhook?: Webhook | undefined;
  /** Unix seconds to judge the timestamp against. */
  readonly nowSeconds: number;
  readonly toleranceSeconds: number;
}

const SCHEMES: Record<Webhook, string> = { board: 'v1', bot: 'sha256' };

function fail(code: DiagnosisCode, reason: string): Diagnosis {
  return { ok: false, code, reason };
}

function mac(secret: string, parts: ReadonlyArray<string | Buffer>): Buffer {
  const hmac = createHmac('sha256', secret);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

function signedParts(webhook: Webhook, timestamp: string, body: Buffer): Array<string | Buffer> {
  return webhook === 'board' ? [timestamp, '.', body] : [body];
}

function matches(claimed: Buffer, secret: string, parts: ReadonlyArray<string | Buffer>): boolean {
  return timingSafeEqual(mac(secret, parts), claimed);
}

function single(headers: CapturedHeaders, name: string): string | undefined {
  const values = headers.get(name);
  return values?.length === 1 ? values[0] : undefined;
}

function inferWebhook(headers: CapturedHeaders, signature: string): Webhook | undefined {
  if (signature.startsWith('v1=')) return 'board';
  if (signature.startsWith('sha256=')) return 'bot';
  if (headers.has('x-svc-timestamp') || headers.has('x-svc-event')) return 'board';
  const agent = single(headers, 'user-agent');
  if (agent?.startsWith('SvcBot-Webhook/')) return 'bot';
  if (agent?.startsWith('Svc-Webhook/')) return 'board';
  return undefined;
}

function malformedSignature(value: string, webhook: Webhook): string {
  const scheme = SCHEMES[webhook];
  const other = SCHEMES[webhook === 'board' ? 'bot' : 'board'];
  if (value.includes(',')) return 'X-Svc-Signature holds several values joined by ","; a proxy merged repeated headers';
  if (value.startsWith(`${other}=`))
    return `X-Svc-Signature uses the ${other}= scheme of ${webhook === 'board' ? 'bot' : 'board'} deliveries; ${webhook} deliveries are signed ${scheme}=<hex>`;
  if (!value.startsWith(`${scheme}=`)) return `X-Svc-Signature must be "${scheme}=<64 hex digits>"`;
  const hex = value.slice(scheme.length + 1);
  if (/^[0-9a-fA-F]*$/.test(hex)) return `X-Svc-Signature has ${hex.length} hex digits after ${scheme}=, expected 64 (truncated?)`;
  return `X-Svc-Signature has characters other than hex digits after ${scheme}=`;
}

function malformedTimestamp(value: string): string {
  if (/^\d{13,}$/.test(value)) return 'X-Svc-Timestamp looks like milliseconds; svc sends Unix time in seconds';
  return 'X-Svc-Timestamp must be Unix time in decimal seconds';
}

/** Body variants a capture commonly introduces, and how to say so. */
function bodyVariants(body: Buffer): Array<{ bytes: Buffer; change: string }> {
  const text = body.toString('utf8');
  const variants: Array<{ bytes: Buffer; change: string }> = [];
  const push = (value: string, change: string): void => {
    if (value !== text) variants.push({ bytes: Buffer.from(value, 'utf8'), change });
  };
  push(text.trimEnd(), 'whitespace or a newline was added at the end (an editor or `echo` adds one)');
  push(text.replace(/\r\n/g, '\n'), 'line endings were changed to CRLF');
  try {
    push(JSON.stringify(JSON.parse(text)), 'the JSON was re-formatted (pretty-printed or re-serialised) after it arrived');
  } catch {
    // not JSON: no re-serialised variant
  }
  return variants;
}

/** Evidence about the body that does not depend on the secret. */
function bodyEvidence(headers: CapturedHeaders, body: Buffer, webhook: Webhook): string | undefined {
  const length = single(headers, 'content-length');
  if (length !== undefined && /^\d+$/.test(length) && Number(length) !== body.length) {
    return `Content-Length says ${length} bytes but the body file has ${body.length}`;
  }
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return 'the body file is not valid JSON (truncated or edited?)';
  }
  const id = single(headers, 'x-svc-delivery');
  if (id !== undefined && typeof payload === 'object' && payload !== null && payload.id !== id) {
    return 'the body is from another delivery: its id differs from X-Svc-Delivery';
  }
  const type = single(headers, 'x-svc-event');
  if (webhook === 'board' && type !== undefined && payload?.type !== type) return 'the body is from another event: its type differs from X-Svc-Event';
  return undefined;
}

function describeAge(ageSeconds: number): string {
  return ageSeconds >= 0 ? `${ageSeconds} s old` : `${-ageSeconds} s in the future`;
}

export function diagnoseSignature(input: DiagnoseInput): Diagnosis {
  const { headers, body, secrets } = input;
  const signatures = headers.get('x-svc-signature') ?? [];
  if (signatures.length === 0) return fail('signature_missing', 'the request has no X-Svc-Signature header');
  if (signatures.length > 1) return fail('signature_duplicated', 'X-Svc-Signature was sent more than once');
  const signature = signatures[0]!;
  const webhook = input.webhook ?? inferWebhook(headers, signature);
  if (webhook === undefined) return fail('signature_malformed', 'X-Svc-Signature is neither "v1=<hex>" (board) nor "sha256=<hex>" (bot)');
  const scheme = SCHEMES[webhook];
  const match = new RegExp(`^${scheme}=([0-9a-fA-F]{64})$`).exec(signature);
  if (!match) return fail('signature_malformed', malformedSignature(signature, webhook));
  const claimed = Buffer.from(match[1]!, 'hex');

  let timestamp = '';
  if (webhook === 'board') {
    const stamps = headers.get('x-svc-timestamp') ?? [];
    if (stamps.length === 0) return fail('timestamp_missing', 'a board delivery needs X-Svc-Timestamp: the signed bytes start with it');
    if (stamps.length > 1) return fail('timestamp_malformed', 'X-Svc-Timestamp was sent more than once');
    timestamp = stamps[0]!;
    // Milliseconds are well-formed digits but never what svc sends; say so rather than "mismatch".
    if (!/^\d{1,12}$/.test(timestamp)) return fail('timestamp_malformed', malformedTimestamp(timestamp));
  }

  for (const [i, secret] of secrets.entries()) {
    const problem = webhookSecretProblem(secret);
    if (problem !== undefined)
      return fail('secret_invalid', `${secrets.length > 1 ? `secret ${i + 1}` : 'the secret'} cannot be an svc webhook secret: ${problem}`);
  }

  const which = secrets.findIndex((secret) => matches(claimed, secret, signedParts(webhook, timestamp, body)));
  if (which === -1) return mismatch(input, webhook, claimed, timestamp);

  const id = single(headers, 'x-svc-delivery');
  const what = `${webhook} delivery${id === undefined ? '' : ` ${id}`}${webhook === 'board' && single(headers, 'x-svc-event') ? ` (${single(headers, 'x-svc-event')})` : ''}`;
  const secretName = secrets.length > 1 ? `secret ${which + 1} of ${secrets.length}` : 'the secret';
  if (webhook === 'bot') return headerMismatch(headers, body, webhook) ?? { ok: true, webhook, summary: `${what} is correctly signed with ${secretName}` };
  const age = input.nowSeconds - Number(timestamp);
  if (Math.abs(age) > input.toleranceSeconds) {
    return fail(
      'timestamp_out_of_tolerance',
      `the signature matches ${secretName}, but X-Svc-Timestamp is ${describeAge(age)} (tolerance ${input.toleranceSeconds} s), so receivers refuse it as a possible replay${
        age > 0 ? '; to check it as of when it arrived, pass --now <unix seconds>' : '; check the clocks'
      }`,
    );
  }
  return (
    headerMismatch(headers, body, webhook) ?? {
      ok: true,
      webhook,
      summary: `${what} is correctly signed with ${secretName}; timestamp ${describeAge(age)} (tolerance ${input.toleranceSeconds} s)`,
    }
  );
}

/**
 * The receiver's checks of the headers that repeat the signed body, after the signature: a correctly
 * signed capture it would still refuse is not valid.
 */
function headerMismatch(headers: CapturedHeaders, body: Buffer, webhook: Webhook): Diagnosis | undefined {
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { id, type } = payload as { id?: unknown; type?: unknown };
  const ids = headers.get('x-svc-delivery') ?? [];
  if (typeof id === 'string' && ids.length > 0 && (ids.length > 1 || canonicalDeliveryId(ids[0]!) !== canonicalDeliveryId(id))) {
    return fail(
      'delivery_id_mismatch',
      `the signature matches, but X-Svc-Delivery ${ids.length > 1 ? 'was sent more than once' : "is not the body's id"}: receivers refuse it (400 delivery_id_mismatch)`,
    );
  }
  const events = headers.get('x-svc-event') ?? [];
  if (webhook === 'board' && typeof type === 'string' && events.length > 0 && (events.length > 1 || events[0] !== type)) {
    return fail(
      'event_type_mismatch',
      `the signature matches, but X-Svc-Event ${events.length > 1 ? 'was sent more than once' : "is not the body's type"}: receivers refuse it (400 event_type_mismatch)`,
    );
  }
  return undefined;
}

function mismatch(input: DiagnoseInput, webhook: Webhook, claimed: Buffer, timestamp: string): Diagnosis {
  const { headers, body, secrets } = input;
  for (const variant of bodyVariants(body)) {
    if (secrets.some((secret) => matches(claimed, secret, signedParts(webhook, timestamp, variant.bytes)))) {
      return fail('body_changed', `the body file is not the bytes that were signed: ${variant.change}; verify the raw body exactly as received`);
    }
  }
  const trimmed = secrets.map((s) => s.trim()).filter((s, i) => s !== secrets[i]);
  if (trimmed.some((secret) => matches(claimed, secret, signedParts(webhook, timestamp, body)))) {
    return fail('wrong_secret', 'the secret has whitespace around it (a newline from a file or an environment variable?); the trimmed secret matches');
  }
  if (webhook === 'board' && secrets.some((secret) => matches(claimed, secret, [body]))) {
    return fail('signature_malformed', 'the signature covers the body alone, as the bot scheme does; board signatures cover timestamp + "." + body');
  }
  const evidence = bodyEvidence(headers, body, webhook);
  if (evidence !== undefined) return fail('body_changed', `the signature does not match, and ${evidence}`);
  const tried = secrets.length > 1 ? `any of the ${secrets.length} secrets` : 'this secret';
  return fail(
    'wrong_secret',
    `the signature was not made with ${tried}: the body looks intact (valid JSON, delivery id agrees), so check that you use the secret of this ${webhook} webhook (board and bot webhooks have separate secrets; after a rotation, the new one)`,
  );
}
