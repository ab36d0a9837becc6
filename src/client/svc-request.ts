import { redactSecrets } from '../internal/logging/redact-secrets';
import { boundedText, MAX_ANSWER_BYTES } from './bounded-text';
import { SvcClientError } from './svc-client-error';

export interface SvcRequest {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  readonly path: string;
  readonly body?: unknown;
  /** The bearer token; it goes in the Authorization header and nowhere else. */
  readonly token?: string;
}

export interface SvcResponse {
  readonly status: number;
  /** The parsed JSON body; undefined for an empty body. */
  readonly json: unknown;
}

export interface Transport {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
}

const MAX_MESSAGE = 200;

/** `{base_url}` + path, keeping a base path such as https://example.com/svc. */
export function routeUrl(baseUrl: string, path: string): string {
  return baseUrl.replace(/\/+$/, '') + path;
}

/**
 * One call to svc. Redirects are not followed, so the Authorization header can never be replayed
 * to another host; a 3xx is an error like any non-2xx.
 */
export async function svcRequest(transport: Transport, request: SvcRequest): Promise<SvcResponse> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'svc-webhooks' };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`;
  const url = routeUrl(transport.baseUrl, request.path);
  let response: Response;
  let text: string | undefined;
  try {
    response = await transport.fetch(url, {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      redirect: 'manual',
      signal: AbortSignal.timeout(transport.timeoutMs),
    });
    text = await boundedText(response, MAX_ANSWER_BYTES);
  } catch (err) {
    throw transportError(err, request, transport.timeoutMs);
  }
  const where = `${request.method} ${request.path}`;
  // An error's oversized body is only not shown: its status still says what went wrong.
  if (response.status < 200 || response.status > 299) throw statusError(response, text ?? '', where, request);
  if (text === undefined) {
    throw new SvcClientError(
      'invalid_response',
      `${where}: svc answered ${response.status} with a body over ${MAX_ANSWER_BYTES} bytes; its answers are far smaller, check the base url`,
      { status: response.status },
    );
  }
  if (text.trim() === '') return { status: response.status, json: undefined };
  try {
    return { status: response.status, json: JSON.parse(text) as unknown };
  } catch (err) {
    throw new SvcClientError('invalid_response', `${where}: svc answered ${response.status} with a body that is not JSON`, {
      status: response.status,
      cause: err,
    });
  }
}

/**
 * svc may echo what it was sent in an error: the token and the webhook secret are cut from the text
 * shown, once it is parsed (a JSON encoder may have escaped them in any of its ways).
 */
function withoutSent(text: string, request: SvcRequest): string {
  const sent = [request.token, (request.body as { secret?: unknown } | undefined)?.secret];
  let out = text;
  for (const value of sent) if (typeof value === 'string' && value.length >= 8 && out.includes(value)) out = out.split(value).join('[redacted]');
  return out;
}

function transportError(err: unknown, request: SvcRequest, timeoutMs: number): SvcClientError {
  const where = `${request.method} ${request.path}`;
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new SvcClientError('timeout', `${where}: svc did not answer within ${timeoutMs} ms`, { cause: err });
  }
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : String(err);
  return new SvcClientError('network_error', `${where}: could not reach svc (${redactSecrets(detail)})`, { cause: err });
}

function statusError(response: Response, text: string, where: string, request: SvcRequest): SvcClientError {
  const status = response.status;
  if (status >= 300 && status < 400) {
    return new SvcClientError('svc_api_error', `${where}: svc answered with a redirect (${status}); redirects are not followed, check the base url`, {
      status,
    });
  }
  const said = svcMessage(text, request);
  const suffix = said === undefined ? '' : `: ${said}`;
  if (status === 429) {
    return new SvcClientError('rate_limited', `${where}: rate limited by svc (429)${suffix}`, withRetryAfter(status, response));
  }
  // A 503 may say when to come back, as a 429 does.
  return new SvcClientError('svc_api_error', `${where}: svc answered ${status}${suffix}`, status === 503 ? withRetryAfter(status, response) : { status });
}

/** The status, and Retry-After in whole seconds when svc sent one: delta-seconds or an HTTP date. */
function withRetryAfter(status: number, response: Response): { status: number; retryAfter?: number } {
  const header = response.headers.get('retry-after')?.trim() ?? '';
  const seconds = /^\d+$/.test(header) ? Number(header) : Math.ceil((Date.parse(header) - Date.now()) / 1000);
  return Number.isFinite(seconds) && seconds > 0 ? { status, retryAfter: seconds } : { status };
}

/**
 * The human text of an svc error body, for display only (the spec's error body shape is not
 * shown and its text is not to be relied on). Redacted and shortened.
 */
function svcMessage(text: string, request: SvcRequest): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const pick = (value: unknown): string | undefined => {
    if (typeof value === 'string' && value !== '') return value;
    if (typeof value === 'object' && value !== null) {
      const o = value as Record<string, unknown>;
      return pick(o.message) ?? pick(o.error) ?? pick(o.code);
    }
    return undefined;
  };
  const said = pick(body);
  if (said === undefined) return undefined;
  const clean = redactSecrets(withoutSent(said, request)).replace(/\s+/g, ' ');
  return clean.length > MAX_MESSAGE ? `${clean.slice(0, MAX_MESSAGE)}…` : clean;
}
