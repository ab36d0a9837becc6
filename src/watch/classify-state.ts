import { isObject } from '../internal/checks/value-checks';
import { printable } from '../internal/logging/printable';
import { lineScrub, NO_SECRETS } from '../internal/logging/log-redaction';
import { redactSecrets } from '../internal/logging/redact-secrets';
import { readSvcTime } from './svc-time';
import { describeStatus } from './describe-status';
import { isElsewhere } from './expect-url';
import type { SvcTime, WatchedWebhook, WebhookHealth, WebhookStatus } from './watch-types';

/** The spec: a webhook failing for a whole day is disabled. */
export const DISABLE_AFTER_MS = 24 * 60 * 60 * 1000;
const MAX_ERROR_CHARS = 300;

/** What one poll learnt: svc's state object, a 404, or an error instead of an answer. */
export type Observation =
  | { readonly kind: 'state'; readonly body: unknown }
  | { readonly kind: 'missing' }
  | { readonly kind: 'error'; readonly error: unknown };

export interface ClassifyInput {
  readonly target: WatchedWebhook;
  readonly observation: Observation;
  /** The status before this poll, for `since` when the state is unchanged. */
  readonly previous: WebhookStatus | undefined;
  readonly now: number;
  /** The URL svc should hold (`expectUrl`); undefined: not checked. */
  readonly expectedUrl?: string | undefined;
}

/** A status and the raw URL svc holds (for a re-enabling PUT, never shown). */
export interface Classified {
  readonly status: WebhookStatus;
  readonly rawUrl: string | undefined;
}

type Fields = { -readonly [K in keyof WebhookStatus]?: WebhookStatus[K] };

/**
 * The health of a webhook from what svc answered. Never healthy unless svc said so in a state that
 * can be read: `enabled` true, no `pausedReason`, no `failingSince`. Unknown fields are ignored, an
 * unknown `pausedReason` is paused with its raw value, a timestamp in an unknown format keeps its
 * state (only the times derived from it are unknown).
 */
export function classify(input: ClassifyInput): Classified {
  const classified = classifyState(input);
  const { expectedUrl } = input;
  const { status, rawUrl } = classified;
  if (expectedUrl === undefined || input.observation.kind !== 'state' || !isObject(input.observation.body)) return classified;
  const expected = displayUrl(expectedUrl);
  // No URL in svc's state: nothing to compare. A URL that is not a text is somewhere else.
  const heldUrl = input.observation.body.url;
  if (heldUrl === undefined || heldUrl === null) return withExpected(classified, expected);
  if (rawUrl !== undefined && !isElsewhere(rawUrl, expectedUrl)) return withExpected(classified, expected);
  // Misdirected wins: a webhook svc disabled or paused there would resume delivering there.
  const { summary: _summary, state, reason: _reason, httpStatus: _httpStatus, problem: _problem, ...rest } = status;
  return done(
    input,
    {
      ...rest,
      state: 'misdirected',
      svcState: state,
      ...(expected === undefined ? {} : { expectedUrl: expected }),
      ...(rest.url === undefined ? { url: '(not a URL)' } : {}),
    },
    rawUrl,
  );
}

function withExpected(classified: Classified, expected: string | undefined): Classified {
  return expected === undefined ? classified : { ...classified, status: { ...classified.status, expectedUrl: expected } };
}

function classifyState(input: ClassifyInput): Classified {
  const { observation, now } = input;
  if (observation.kind === 'missing') return done(input, { state: 'missing', reason: 'not_found' }, undefined);
  if (observation.kind === 'error') return done(input, fromError(observation.error), undefined);
  const body = observation.body;
  if (!isObject(body)) return done(input, { state: 'unreachable', reason: 'malformed_state' }, undefined);
  const fields = readFields(body, now);
  const rawUrl = typeof body.url === 'string' ? body.url : undefined;
  const enabled = body.enabled;
  if (enabled === false || (enabled !== true && fields.disabledAt !== undefined)) return done(input, { ...fields, state: 'disabled' }, rawUrl);
  if (enabled !== true) return done(input, { ...fields, state: 'unreachable', reason: 'malformed_state' }, rawUrl);
  const paused = pausedReason(body.pausedReason);
  if (paused !== undefined) return done(input, { ...fields, state: 'paused', pausedReason: paused }, rawUrl);
  if (fields.failingSince !== undefined) {
    const from = fields.failingSince.ms;
    return done(input, { ...fields, state: 'failing', ...(from === undefined ? {} : { disablesAt: from + DISABLE_AFTER_MS }) }, rawUrl);
  }
  return done(input, { ...fields, state: 'healthy' }, rawUrl);
}

function done(input: ClassifyInput, fields: Fields & { state: WebhookHealth }, rawUrl: string | undefined): Classified {
  const { previous, now, target } = input;
  const fromSvc = fields.state === 'failing' ? fields.failingSince?.ms : fields.state === 'disabled' ? fields.disabledAt?.ms : undefined;
  const since = fromSvc ?? (previous !== undefined && previous.state === fields.state ? previous.since : now);
  const status = { ...target, ...fields, since, checkedAt: now } as Omit<WebhookStatus, 'summary'>;
  return { status: { ...status, summary: describeStatus(status, now) } as WebhookStatus, rawUrl };
}

function readFields(body: Record<string, unknown>, now: number): Fields {
  const out: Fields = {};
  const url = displayUrl(body.url);
  if (url !== undefined) out.url = url;
  const times: Array<['failingSince' | 'disabledAt' | 'lastOkAt', SvcTime | undefined]> = [
    ['failingSince', readSvcTime(body.failingSince, now)],
    ['disabledAt', readSvcTime(body.disabledAt, now)],
    ['lastOkAt', readSvcTime(body.lastOkAt, now)],
  ];
  for (const [name, time] of times) if (time !== undefined) out[name] = time;
  const lastError = errorText(body.lastError);
  if (lastError !== undefined) out.lastError = lastError;
  const pending = pendingCount(body.pending);
  if (pending !== undefined) out.pending = pending;
  return out;
}

/** `PLAN`, any other text as it came, or undefined for none (null, absent, or the empty text of an unset enum). */
function pausedReason(value: unknown): string | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (typeof value === 'string') return printable(value, 64);
  // Not a text, yet set: paused all the same, shown as it came.
  return printable(safeJson(value), 64);
}

/** The URL as logs and the CLI show it: no credentials, no query, no fragment (a token may ride in them). */
export function displayUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  try {
    const url = new URL(value);
    return printable(`${url.protocol}//${url.host}${url.pathname}${url.search === '' ? '' : '?…'}`, 200);
  } catch {
    return '(not a URL)';
  }
}

function errorText(value: unknown): string | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  // svc quotes what the receiver answered, which may echo a request's signature or credentials:
  // scrubbed as a log line is (signatures, tokens, fields named like credentials).
  const text = typeof value === 'string' ? SCRUB.message(value) : safeJson(SCRUB.fields({ value }).value);
  return printable(text.replace(/\s+/g, ' ').trim(), MAX_ERROR_CHARS);
}

const SCRUB = lineScrub(NO_SECRETS);

function pendingCount(value: unknown): number | string | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d{1,20}$/.test(value)) return value;
  return undefined;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return 'a value that cannot be shown';
  }
}

/** Why svc's API told nothing: the client's error code, 401 and 403 named apart. */
function fromError(error: unknown): Fields & { state: WebhookHealth } {
  const code = (error as { code?: unknown } | null)?.code;
  const status = (error as { status?: unknown } | null)?.status;
  const message = (error as { message?: unknown } | null)?.message;
  const out: Fields & { state: WebhookHealth } = { state: 'unreachable', reason: typeof code === 'string' ? code : 'error' };
  if (typeof status === 'number') {
    out.httpStatus = status;
    if (status === 401) out.reason = 'unauthorized';
    if (status === 403) out.reason = 'forbidden';
  }
  if (typeof message === 'string' && message !== '') out.problem = printable(redactSecrets(message).replace(/\s+/g, ' '), MAX_ERROR_CHARS);
  return out;
}
