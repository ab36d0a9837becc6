import type { RequestFacts } from '../internal/request/request-access';
import { headerValues } from '../internal/request/headers';
import type { TraceCarrier } from '../internal/delivery/trace-carrier';

/** What the inbox keeps of one delivery: enough to run its handlers later, and to show it as a dead letter. */
export interface InboxJob {
  readonly webhook: 'board' | 'bot';
  /** The canonical delivery id. */
  readonly deliveryId: string;
  /** The board event type or the bot event kind. */
  readonly kind: string;
  /** The verified raw body (UTF-8: the receiver refuses anything else), re-parsed by the worker. */
  readonly body: string;
  /** The delivery headers that matter, as sent; never the signature. */
  readonly headers: Readonly<Record<string, string>>;
  /** When the request arrived, in ms since the epoch. */
  readonly receivedAt: number;
  /** Board only: the verified X-Svc-Timestamp, in seconds. */
  readonly timestamp?: number;
  /** Board events with a sequence, when board order is on: the board whose sequence this event takes its place in. */
  readonly board?: string;
  readonly sequence?: number;
  /** Whether this event waits for its turn (an ordered kind); other kinds only mark their sequence as passed. */
  readonly ordered?: boolean;
  /** With a secret resolver: the board or bot whose secret verified the delivery (its handlers' logger drops that secret). */
  readonly verifiedBy?: string;
  /** With a tracer provider registered at the receiver: the receive span's context, which each processing span links to. */
  readonly trace?: TraceCarrier;
}

/** The headers a worker needs to rebuild the delivery (the protocols compare them with the body). */
const KEPT_HEADERS = ['content-type', 'x-svc-delivery', 'x-svc-event', 'x-svc-timestamp', 'user-agent'] as const;

export function keptHeaders(req: RequestFacts): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const values = headerValues(req, name);
    // The receiver refused repeated delivery headers; a repeated other one is kept as Node joins it.
    if (values.length > 0) kept[name] = values.join(', ');
  }
  return kept;
}

/**
 * The delivery checks compare the delivery headers with the body through the request; in a worker
 * there is no request, only the headers kept in the job. They read nothing else of it.
 */
export function headersOnly(headers: Readonly<Record<string, string>>): RequestFacts {
  return { headers, rawHeaders: Object.entries(headers).flat() };
}

/**
 * The BullMQ job id of a delivery: one job per canonical delivery id, so a repeat or a race never
 * makes a second job. BullMQ refuses ids with ":" and integer-like ids; the escape keeps the map
 * one-to-one and readable (`d-` then the id, with "%" and ":" percent-encoded, and a lone surrogate,
 * which Redis would receive as U+FFFD like any other, as `%uXXXX`).
 */
export function jobIdOf(deliveryId: string): string {
  return `d-${deliveryId.replace(ESCAPED, (char) => (char === '%' ? '%25' : char === ':' ? '%3A' : `%u${char.charCodeAt(0).toString(16).toUpperCase()}`))}`;
}

export function deliveryIdOf(jobId: string): string {
  return jobId
    .slice(2)
    .replace(/%(25|3A|u[0-9A-F]{4})/g, (_, code: string) => (code === '25' ? '%' : code === '3A' ? ':' : String.fromCharCode(parseInt(code.slice(1), 16))));
}

// With the u flag, a surrogate pair is one code point: \p{Cs} matches only a lone surrogate.
const ESCAPED = /[%:]|\p{Cs}/gu;
