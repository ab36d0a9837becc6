import { tooLarge } from '../../capture/body-bounds';
import type { RequestAccess, RequestFacts } from '../../internal/request/request-access';
import { INTERNAL, outcomeHeaders, type Outcome } from '../../receive/outcome';
import type { WebhookReceiver } from '../webhook-receiver';
import { WEB_REQUEST } from '../web/web-request';

/**
 * A request as any framework or runtime can describe it, its body already read: what
 * `webhook.receive()` takes where neither a Node request nor a Fetch `Request` is at hand (a
 * serverless event, a queue message, a test).
 */
export interface WebhookRequest {
  /** The raw body exactly as it was received: the signature is over these bytes. */
  readonly body: string | Uint8Array;
  /** The request headers: a Fetch `Headers` or a plain object (values may be arrays, names in any case). */
  readonly headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The path and query the request was sent to, for a path that names the board or bot and for logs; default the webhook's path. */
  readonly url?: string;
  /** The HTTP method; default POST. Any other is answered 405. */
  readonly method?: string;
}

/** The answer to send: its status, headers (`Content-Type`, and `Retry-After` when svc may retry) and JSON body. */
export interface WebhookResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

const encoder = new TextEncoder();

/** How the pipeline reads a WebhookRequest: its headers and path as given, its body as it is. */
export const PLAIN_REQUEST: RequestAccess<WebhookRequest> = {
  facts: (request): RequestFacts => ({ headers: request.headers as RequestFacts['headers'], url: request.url ?? '/' }),
  url: (request) => request.url ?? '/',
  readBody(request, limit) {
    const body = typeof request.body === 'string' ? encoder.encode(request.body) : request.body;
    return body.byteLength > limit ? Promise.reject(tooLarge(limit)) : Promise.resolve(body);
  },
  // The body was read whole by the caller: there is no connection to close.
  complete: () => true,
  nodeRequest: () => undefined,
  // For `ctx.request`, made only if a handler reads it.
  fetchRequest: (request) =>
    new Request(new URL(request.url ?? '/', 'http://localhost'), { method: request.method ?? 'POST', headers: fetchHeaders(request.headers) }),
};

function fetchHeaders(source: WebhookRequest['headers']): Headers {
  if (typeof Headers !== 'undefined' && source instanceof Headers) return source;
  const headers = new Headers();
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
  }
  return headers;
}

const METHOD_NOT_ALLOWED: Outcome = { status: 405, body: '{"ok":false,"code":"method_not_allowed","message":"webhook deliveries are POST requests"}' };

function isFetchRequest(request: Request | WebhookRequest): request is Request {
  return typeof Request !== 'undefined' && request instanceof Request;
}

/**
 * One request through a webhook's pipeline, framework-free: a Fetch `Request` (its body read as a
 * stream within the limit) or a WebhookRequest (its body already read). Never rejects: a failure
 * of the pipeline itself is a 500 answer.
 */
export async function receiveRequest(receiver: WebhookReceiver, request: Request | WebhookRequest): Promise<WebhookResponse> {
  const method = request.method ?? 'POST';
  if (method.toUpperCase() !== 'POST')
    return { status: METHOD_NOT_ALLOWED.status, headers: outcomeHeaders(METHOD_NOT_ALLOWED, 'POST'), body: METHOD_NOT_ALLOWED.body };
  let outcome: Outcome;
  try {
    outcome = isFetchRequest(request) ? await receiver.receive(request, WEB_REQUEST) : await receiver.receive(request, PLAIN_REQUEST);
  } catch {
    outcome = INTERNAL;
  }
  // Refused before the body was read (forged, oversized): let the runtime drop the rest unread.
  if (outcome.closeConnection && isFetchRequest(request) && request.body !== null && !request.bodyUsed) request.body.cancel().catch(() => undefined);
  return { status: outcome.status, headers: outcomeHeaders(outcome), body: outcome.body };
}
