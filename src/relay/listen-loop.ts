import type { CursorFile } from './cursor-file';
import { forward, type ForwardResult, type ForwardTarget } from './forward';
import { SseReader, type Hello, type StreamedDelivery } from './sse-frames';

/**
 * The listener: one stream from the relay, resumed from its cursor after every break; each
 * delivery handed to the local receiver in order. The cursor moves past a delivery only once the
 * receiver answered it (any status) or the filters skipped it: while the receiver does not answer,
 * the same delivery is retried and nothing after it is taken.
 */

export interface ListenFilter {
  readonly types: ReadonlySet<string> | undefined;
  readonly boards: ReadonlySet<string> | undefined;
}

export interface ListenEvents {
  connected(hello: Hello): void;
  delivered(delivery: StreamedDelivery, result: ForwardResult): void;
  skipped(delivery: StreamedDelivery): void;
  /** Something to say at most once a minute per `key` (the relay is unreachable, the receiver is down). */
  notice(key: string, text: string): void;
  /** A condition of `key` is over (the receiver answers again). */
  recovered(key: string, text: string): void;
}

export interface ListenConfig {
  readonly relayUrl: string;
  readonly token: string;
  readonly target: ForwardTarget;
  readonly filter: ListenFilter;
  readonly cursor: CursorFile;
  /** With no cursor: every delivery the relay keeps, not only new ones. */
  readonly fromStart: boolean;
  readonly signal: AbortSignal;
  readonly events: ListenEvents;
  /** Waits between tries of a receiver that does not answer, in ms. */
  readonly retryMs: number;
}

/** The relay refused the token: no retry can help. */
export class RelayRefused extends Error {}

/** The longest line the relay writes: a delivery within the largest body limit, JSON-escaped. */
const MAX_LINE_BYTES = 8 * 1024 * 1024;

export function passes(filter: ListenFilter, delivery: StreamedDelivery): boolean {
  if (filter.types !== undefined && !filter.types.has(delivery.type)) return false;
  if (filter.boards !== undefined && (delivery.webhook !== 'board' || !filter.boards.has(delivery.scope))) return false;
  return true;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

async function refusal(res: Response): Promise<string> {
  const body = (await res.json().catch(() => ({}))) as { code?: unknown };
  return body.code === 'token_missing' ? 'the relay wants an access token' : 'the relay refused the access token: it is wrong or was revoked';
}

/** Reports a mirrored delivery's answer, so that the relay answers svc with it. */
async function report(config: ListenConfig, seq: number, result: ForwardResult): Promise<void> {
  await config.target
    .fetch(new URL('/relay/answers', config.relayUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${config.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ seq, status: result.status ?? 0 }),
      signal: AbortSignal.timeout(5000),
    })
    .then((res) => res.body?.cancel())
    .catch(() => undefined);
}

/** Hands one delivery on until the receiver answers; undefined when the listener was stopped first. */
async function handOn(config: ListenConfig, delivery: StreamedDelivery): Promise<ForwardResult | undefined> {
  const { events, signal } = config;
  for (let attempt = 1; !signal.aborted; attempt++) {
    const result = await forward(delivery, config.target);
    if (delivery.mirror && attempt === 1) void report(config, delivery.seq, result);
    if (result.status !== undefined) {
      if (attempt > 1) events.recovered('receiver', 'the local receiver answers again');
      return result;
    }
    if (result.failure?.startsWith('no local')) return result;
    events.notice(
      'receiver',
      `the local receiver does not answer (${result.failure ?? 'no answer'}); holding at #${delivery.seq} and retrying every ${config.retryMs / 1000} s`,
    );
    await sleep(config.retryMs, signal);
  }
  return undefined;
}

/** Reads one stream until it ends, breaks or the listener is stopped. */
async function readStream(config: ListenConfig, res: Response): Promise<void> {
  const { cursor, events, signal } = config;
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const sse = new SseReader(MAX_LINE_BYTES);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      for (const event of sse.push(value)) {
        if (event.event === 'hello') {
          const hello = JSON.parse(event.data) as Hello;
          if (cursor.value === undefined) cursor.save(hello.cursor);
          events.connected(hello);
          continue;
        }
        if (event.event !== 'delivery') continue;
        const delivery = JSON.parse(event.data) as StreamedDelivery;
        if (cursor.value !== undefined && delivery.seq <= cursor.value) continue;
        if (!passes(config.filter, delivery)) events.skipped(delivery);
        else {
          const result = await handOn(config, delivery);
          if (result === undefined) return;
          events.delivered(delivery, result);
        }
        if (signal.aborted) return;
        cursor.save(delivery.seq);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Listens until `signal` aborts; rejects with RelayRefused when the relay refuses the token. */
export async function listen(config: ListenConfig): Promise<void> {
  const { events, signal, cursor } = config;
  let wait = 250;
  while (!signal.aborted) {
    const url = new URL('/relay/stream', config.relayUrl);
    if (cursor.value === undefined && config.fromStart) url.searchParams.set('from', 'start');
    const headers: Record<string, string> = { authorization: `Bearer ${config.token}`, accept: 'text/event-stream' };
    if (cursor.value !== undefined) headers['last-event-id'] = String(cursor.value);
    let res: Response;
    try {
      res = await config.target.fetch(url, { headers, signal });
    } catch {
      if (signal.aborted) return;
      events.notice('relay', `cannot reach the relay at ${config.relayUrl}; retrying`);
      await sleep(wait, signal);
      wait = Math.min(wait * 2, 2000);
      continue;
    }
    if (res.status === 401) throw new RelayRefused(await refusal(res));
    if (res.status !== 200 || res.body === null) {
      const code = ((await res.json().catch(() => ({}))) as { code?: unknown }).code;
      events.notice('relay', `the relay answered ${res.status}${typeof code === 'string' ? ` ${code}` : ''}; retrying`);
      await sleep(wait, signal);
      wait = Math.min(wait * 2, 2000);
      continue;
    }
    wait = 250;
    try {
      await readStream(config, res);
    } catch {
      // The connection broke (the relay restarted, the network went): resume from the cursor.
    }
    if (signal.aborted) return;
    events.notice('relay', 'the stream from the relay ended; reconnecting from the cursor');
    await sleep(wait, signal);
  }
}
