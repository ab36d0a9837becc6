/**
 * A live view of the deliveries a receiver answered, for development: feed it from each webhook's
 * `onDelivery`, mount its router, and open `/inspector` in a browser.
 *
 * It keeps only the last `limit` deliveries, and each body at most `maxBodyChars` characters, so a busy
 * or hostile sender cannot grow its memory. It stores only the fields named in StoredDelivery: never
 * headers, so a signature or secret cannot reach the page. A body whose signature did not verify is
 * kept only as its size and an escaped preview of its first bytes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Request, type Response, type Router } from 'express';
import type { DeliveryRecord } from '../../src';
import { inspectorAccess } from './inspector-access';

export interface DeliveryInspectorOptions {
  /** Where the page is served; the JSON list and the event stream live under it. Default `/inspector`. */
  path?: string;
  /** How many recent deliveries to keep. Default 200. */
  limit?: number;
  /** Longer pretty-printed bodies are cut to this many characters. Default 64 KiB. */
  maxBodyChars?: number;
  /**
   * Host names the page answers besides this machine's (localhost, 127.0.0.1, [::1]). Any other
   * Host header is refused (403), so a web page cannot read the deliveries through DNS rebinding.
   * Without `accessToken` only connections to a loopback address are answered at all.
   */
  allowedHosts?: readonly string[];
  /**
   * A random token (32+ characters) that every request must carry, in `Authorization: Bearer` or
   * in the cookie the page's form sets: for a server that listens beyond this machine. Without it,
   * only connections made to a loopback address, with a Host of this machine, are answered.
   */
  accessToken?: string;
  /** How many live event streams may be open at once; more are answered 503. Default 8. */
  maxClients?: number;
  /** Where refusals that need the operator (a request through a proxy without a token) are logged. */
  logger?: { warn(fields: object, message: string): void };
}

/** The fields of a DeliveryRecord the page keeps: never its headers, payload or queue details. */
type ShownFields = 'webhook' | 'deliveryId' | 'kind' | 'outcome' | 'status' | 'code' | 'message' | 'problems' | 'durationMs' | 'receivedAt' | 'verified';

/** One delivery as the page shows it. `seq` numbers deliveries in arrival order, from 1. */
export interface StoredDelivery extends Pick<DeliveryRecord, ShownFields> {
  readonly seq: number;
  /** The verified, parsed body, pretty-printed. */
  readonly body?: string;
  readonly bodyTruncated?: boolean;
  /** A body that is not shown whole: unverified (forged or corrupted), or verified but not JSON. */
  readonly raw?: RawPreview;
}

/** The size and the first bytes of a body, every character outside printable ASCII escaped. */
export interface RawPreview {
  readonly size: number;
  readonly preview: string;
  readonly truncated: boolean;
}

/** How many bytes of an unverified body the page shows. */
export const PREVIEW_BYTES = 120;

export interface DeliveryInspector {
  readonly path: string;
  /** Pass to `webhook.onDelivery(...)`; it is bound, so it can be handed over as is. */
  readonly add: (record: DeliveryRecord) => void;
  /** Newest first. */
  recent(): StoredDelivery[];
  /** Serves the page, `<path>/deliveries` (JSON) and `<path>/events` (Server-Sent Events). */
  readonly router: Router;
  /** Ends the open event streams, which would otherwise keep `server.close()` waiting forever, and refuses new ones (503). */
  close(): void;
}

const HEARTBEAT_MS = 15_000;
/**
 * A client this far behind is dropped rather than buffered for; its browser reconnects and resyncs.
 * The first snapshot is held to it too: it carries the newest deliveries that fit.
 */
export const MAX_BACKLOG_BYTES = 1 << 20;

export function deliveryInspector(options: DeliveryInspectorOptions = {}): DeliveryInspector {
  const path = options.path ?? '/inspector';
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(path)) throw new TypeError('inspector: `path` must look like "/inspector"');
  const limit = positiveInteger(options.limit ?? 200, 'limit');
  const maxBodyChars = positiveInteger(options.maxBodyChars ?? 64 * 1024, 'maxBodyChars');
  const maxClients = positiveInteger(options.maxClients ?? 8, 'maxClients');

  // Read and fill in the page once; the path is checked above, so it needs no escaping.
  const page = readFileSync(join(__dirname, 'inspector.html'), 'utf8').replaceAll('{{path}}', path);

  const ring: StoredDelivery[] = [];
  const clients = new Set<Response>();
  let closed = false;
  let seq = 0;

  const heartbeat = setInterval(() => {
    for (const res of clients) send(res, ': keep-alive\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();

  function send(res: Response, chunk: string): void {
    if (res.writableLength > MAX_BACKLOG_BYTES) {
      clients.delete(res);
      res.end();
      return;
    }
    res.write(chunk);
  }

  function add(record: DeliveryRecord): void {
    const entry = store(record, ++seq, maxBodyChars);
    ring.push(entry);
    if (ring.length > limit) ring.shift();
    const event = `id: ${entry.seq}\nevent: delivery\ndata: ${JSON.stringify(entry)}\n\n`;
    for (const res of clients) send(res, event);
  }

  const recent = (): StoredDelivery[] => ring.slice().reverse();

  /** The newest deliveries whose JSON fits the backlog bound, newest first. */
  function snapshot(): string {
    const parts: string[] = [];
    let size = 0;
    for (let i = ring.length - 1; i >= 0; i--) {
      const part = JSON.stringify(ring[i]);
      // Bytes as sent: text beyond ASCII takes up to three bytes a character.
      const bytes = Buffer.byteLength(part);
      if (size + bytes > MAX_BACKLOG_BYTES) break;
      parts.push(part);
      size += bytes + 1;
    }
    return `{"limit":${limit},"truncated":${parts.length < ring.length},"deliveries":[${parts.join(',')}]}`;
  }

  const router = express.Router();
  // Only this machine (or the holder of the access token) may read it.
  router.use(inspectorAccess({ path, allowedHosts: options.allowedHosts ?? [], accessToken: options.accessToken, logger: options.logger }));
  router.get(path, (_req: Request, res: Response) => {
    // The page loads only its own script and style, so even a rendering bug cannot run injected code.
    res.set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'",
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    res.send(page);
  });
  router.get(`${path}/inspector.js`, asset('inspector.js', 'text/javascript'));
  router.get(`${path}/inspector.css`, asset('inspector.css', 'text/css'));
  router.get(`${path}/deliveries`, (_req: Request, res: Response) => {
    res.set({ 'Cache-Control': 'no-store', 'Content-Type': 'application/json; charset=utf-8' }).send(snapshot());
  });
  router.get(`${path}/events`, (_req: Request, res: Response) => {
    // A page reconnects 2 s after its stream ends: one opened during shutdown would hold server.close() open forever.
    if (closed) {
      res.status(503).set('Connection', 'close').type('text/plain').send('inspector: the server is shutting down\n');
      return;
    }
    if (clients.size >= maxClients) {
      res.status(503).set('Retry-After', '10').type('text/plain').send('inspector: too many open event streams\n');
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    // Every connection, first or reconnect, starts with the whole list, in the same stream as the live
    // events: nothing that arrives between the two can be missed or shown twice.
    res.write(`retry: 2000\nevent: snapshot\ndata: ${snapshot()}\n\n`);
    clients.add(res);
    res.on('close', () => clients.delete(res));
  });

  return {
    path,
    add,
    recent,
    router,
    close() {
      closed = true;
      clearInterval(heartbeat);
      for (const res of clients) res.end();
      clients.clear();
    },
  };
}

/** Copies the fields the page shows, by name, so nothing else a record may carry is ever kept. */
function store(record: DeliveryRecord, seq: number, maxBodyChars: number): StoredDelivery {
  const entry: { -readonly [K in keyof StoredDelivery]: StoredDelivery[K] } = {
    seq,
    webhook: record.webhook,
    verified: record.verified,
    outcome: record.outcome,
    status: record.status,
    durationMs: record.durationMs,
    receivedAt: record.receivedAt,
  };
  if (record.deliveryId !== undefined) entry.deliveryId = record.deliveryId;
  if (record.kind !== undefined) entry.kind = record.kind;
  if (record.code !== undefined) entry.code = record.code;
  if (record.message !== undefined) entry.message = record.message;
  if (record.problems !== undefined) entry.problems = record.problems.map((p) => ({ path: p.path, message: p.message }));
  if (record.verified && record.payload !== undefined) {
    const body = JSON.stringify(record.payload, null, 2);
    entry.body = body.length > maxBodyChars ? body.slice(0, maxBodyChars) : body;
    if (body.length > maxBodyChars) entry.bodyTruncated = true;
  } else if (record.body !== undefined) {
    entry.raw = rawPreview(record.body);
  }
  return entry;
}

/** A body shown as data, never as markup or control codes: `\n`, `\x1b`, `\u202e` as escapes. */
export function rawPreview(body: Uint8Array): RawPreview {
  const head = new TextDecoder('utf-8', { ignoreBOM: true }).decode(body.subarray(0, PREVIEW_BYTES));
  const preview = head.replace(/[^\x20-\x7e]|\\/g, (c) => {
    if (c === '\\') return '\\\\';
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
  return { size: body.length, preview, truncated: body.length > PREVIEW_BYTES };
}

function asset(file: string, type: string) {
  const text = readFileSync(join(__dirname, file), 'utf8');
  return (_req: Request, res: Response) => {
    res.set({ 'Content-Type': `${type}; charset=utf-8`, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
    res.send(text);
  };
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`inspector: \`${name}\` must be a positive integer`);
  return value;
}
