import { printable } from '../../internal/logging/printable';
import type { WebhookRequest } from '../plain/plain-request';

/** Which of the HTTP event shapes an event is: REST API (payload 1.0), HTTP API or Function URL (2.0), ALB. */
export type LambdaEventKind = 'rest' | 'http' | 'alb';

/** An event read: the request it carries, or the shape it has when it is none this adapter knows. */
export type ReadEvent =
  | { readonly ok: true; readonly kind: LambdaEventKind; readonly request: WebhookRequest; readonly multiValueHeaders: boolean }
  | { readonly ok: false; readonly shape: string };

const KIND_NAMES: Readonly<Record<LambdaEventKind, string>> = {
  rest: 'an API Gateway REST API event (payload 1.0)',
  http: 'an HTTP API or Function URL event (payload 2.0)',
  alb: 'an ALB event',
};

type Fields = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The kind an event says it is, by the fields AWS documents as telling them apart. */
function kindOf(event: Fields): LambdaEventKind | undefined {
  const context = event.requestContext;
  if (!isObject(context)) return undefined;
  if (event.version === '2.0') return isObject(context.http) ? 'http' : undefined;
  if (isObject(context.elb)) return 'alb';
  return event.version === undefined || event.version === '1.0' ? 'rest' : undefined;
}

/**
 * The request an HTTP event carries, with the exact bytes of its body: base64 decoded when the
 * event says so, else the UTF-8 bytes of its text. Anything that is not such an event (a queue's, a
 * schedule's, a body already parsed into an object) is named instead, never guessed at.
 */
export function readLambdaEvent(event: unknown): ReadEvent {
  if (!isObject(event)) return { ok: false, shape: event === null ? 'null' : Array.isArray(event) ? 'an array' : `a ${typeof event}` };
  const kind = kindOf(event);
  if (kind === undefined) return { ok: false, shape: `an event with the fields ${fieldNames(event)}` };
  const http = kind === 'http' ? (event.requestContext as { http: Fields }).http : undefined;
  const method = http === undefined ? event.httpMethod : http.method;
  const path = kind === 'http' ? event.rawPath : event.path;
  const problem =
    typeof method !== 'string'
      ? ['method', method]
      : typeof path !== 'string'
        ? ['path', path]
        : typeof event.isBase64Encoded !== 'boolean'
          ? ['isBase64Encoded', event.isBase64Encoded]
          : undefined;
  if (problem !== undefined) return { ok: false, shape: `${KIND_NAMES[kind]} whose ${problem[0]} is ${kindOfValue(problem[1])}` };
  const body = bodyOf(event.body, event.isBase64Encoded === true);
  if (typeof body === 'object' && !(body instanceof Uint8Array)) return { ok: false, shape: `${KIND_NAMES[kind]} whose body is ${body.problem}` };
  const headers = headersOf(event, kind);
  if (headers === undefined) return { ok: false, shape: `${KIND_NAMES[kind]} whose headers are no HTTP headers` };
  const query = kind === 'http' && typeof event.rawQueryString === 'string' && event.rawQueryString !== '' ? `?${event.rawQueryString}` : '';
  return {
    ok: true,
    kind,
    request: { body, headers, url: `${path as string}${query}`, method: method as string },
    multiValueHeaders: kind !== 'http' && isObject(event.multiValueHeaders),
  };
}

/** The body's bytes, or what is wrong with it. */
function bodyOf(body: unknown, base64: boolean): string | Uint8Array | { readonly problem: string } {
  if (body === null || body === undefined) return '';
  if (typeof body !== 'string') return { problem: `${kindOfValue(body)}, not text (parsed before it reached the handler?)` };
  if (!base64) return body;
  return base64Bytes(body) ?? { problem: 'not base64, though isBase64Encoded is true' };
}

/** Strict: text that is not base64 is refused rather than decoded to other bytes. */
function base64Bytes(text: string): Uint8Array | undefined {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

type PlainHeaders = Record<string, string | readonly string[] | undefined>;

/**
 * The headers with every value each was sent with: `multiValueHeaders` where the event has them
 * (`headers` keeps only a repeated header's last value, which would hide a second signature).
 * Payload 2.0 joins a repeated header's values with commas: as a Fetch `Headers` the pipeline
 * splits them again, as it does for any Fetch request.
 */
function headersOf(event: Fields, kind: LambdaEventKind): PlainHeaders | Headers | undefined {
  const source = kind !== 'http' && isObject(event.multiValueHeaders) ? event.multiValueHeaders : event.headers;
  if (source === null || source === undefined) return kind === 'http' ? joinedHeaders({}, event.cookies) : {};
  if (!isObject(source)) return undefined;
  return kind === 'http' ? joinedHeaders(source, event.cookies) : (source as PlainHeaders);
}

function joinedHeaders(source: Fields, cookies: unknown): Headers | undefined {
  const headers = new Headers();
  try {
    for (const [name, value] of Object.entries(source)) {
      if (typeof value === 'string') headers.append(name, value);
      else if (value !== undefined) return undefined;
    }
    // Payload 2.0 carries the cookies apart from the headers: put them back, for ctx.request.
    if (Array.isArray(cookies) && cookies.length > 0 && !headers.has('cookie')) headers.set('cookie', cookies.join('; '));
  } catch {
    // A name or value no HTTP request can carry.
    return undefined;
  }
  return headers;
}

/** At most the first 12 top-level field names, for a log line: names only, never a value. */
function fieldNames(event: Fields): string {
  const names = Object.keys(event);
  if (names.length === 0) return 'none';
  const shown = names.slice(0, 12).map((name) => printable(name, 40));
  return names.length > shown.length ? `${shown.join(', ')} and ${names.length - shown.length} more` : shown.join(', ');
}

function kindOfValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
