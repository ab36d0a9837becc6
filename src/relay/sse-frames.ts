import type { StoredDelivery } from './relay-record';

/**
 * The relay's stream is Server-Sent Events: plain HTTP/1.1 that proxies, load balancers and
 * corporate networks pass as they pass any slow response (no Upgrade to refuse), with a standard
 * cursor, `Last-Event-ID`, for resuming. Each delivery is one `delivery` event whose id is its
 * sequence number; `hello` opens the stream; comments keep idle connections open.
 */

/** What the relay says first on a stream. */
export interface Hello {
  /** The listener name the token belongs to. */
  readonly name: string;
  /** The sequence number the stream starts after. */
  readonly cursor: number;
  /** The relay's newest sequence number. */
  readonly last: number;
  /** True when the listener's cursor was older than what the relay still keeps. */
  readonly missed: boolean;
  /** The listener the relay answers svc with (`relay --mirror`), if any. */
  readonly mirror: string | null;
}

/** A delivery on the stream: the stored record, and whether the relay waits for this listener's answer. */
export interface StreamedDelivery extends StoredDelivery {
  readonly mirror: boolean;
}

export function helloFrame(hello: Hello): string {
  return `event: hello\ndata: ${JSON.stringify(hello)}\n\n`;
}

export function deliveryFrame(delivery: StreamedDelivery): string {
  // JSON.stringify writes no raw newline, so the data is one line.
  return `id: ${delivery.seq}\nevent: delivery\ndata: ${JSON.stringify(delivery)}\n\n`;
}

export const HEARTBEAT_FRAME = ': keep-alive\n\n';

/** One event read back from the stream. */
export interface SseEvent {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: string;
}

/**
 * Reads the events of a stream of text chunks: only what the relay writes (`event:`, `id:`,
 * `data:` lines, comments, a blank line ending each event). A line longer than `maxLineBytes`
 * throws: the relay never writes one.
 */
export class SseReader {
  private buffer = '';
  private event = 'message';
  private id: string | undefined;
  private data: string[] = [];

  constructor(private readonly maxLineBytes: number) {}

  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const events: SseEvent[] = [];
    let at: number;
    while ((at = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, at).replace(/\r$/, '');
      this.buffer = this.buffer.slice(at + 1);
      const done = this.line(line);
      if (done !== undefined) events.push(done);
    }
    if (this.buffer.length > this.maxLineBytes) throw new Error('the relay sent a line longer than any delivery');
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      const ended = this.data.length === 0 ? undefined : { event: this.event, id: this.id, data: this.data.join('\n') };
      this.event = 'message';
      this.data = [];
      return ended;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') this.event = value;
    else if (field === 'id') this.id = value;
    else if (field === 'data') this.data.push(value);
    return undefined;
  }
}
