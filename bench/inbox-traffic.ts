/**
 * The deliveries of the inbox measurements: signed board events, each a distinct delivery, posted
 * over keep-alive connections, and the open loop that times their answers. Used by the parent
 * (closed loops that fill the queue) and by the sender child (the open loop of the time to 2xx).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { ROOT } from './paths';
import { recordGcPauses, sentMark, type SentMark } from './inbox-phases';
import { SVC_SECRET } from './signing';

export interface SignedEvent {
  readonly body: string;
  readonly headers: Record<string, string>;
}

export interface LatencyFigures {
  readonly p50: number;
  readonly p99: number;
  readonly count: number;
  readonly non2xx: number;
  /** The sender's own GC pauses during the loop (they would count as time to 2xx): how many, and their sum in ms. */
  readonly senderGc: { readonly pauses: number; readonly ms: number };
}

/** Board ids of warm-up deliveries start with this: their handlers return at once, and the receiver leaves them out of its figures. */
export const WARM_UP_BOARD = '00000000-0000-4000-8000-';

const TEMPLATE = JSON.parse(readFileSync(join(ROOT, 'examples', 'fixtures', 'board', 'task.updated.json'), 'utf8')) as Record<string, unknown>;

export function signedEvent(board: string, sequence: number): SignedEvent {
  const id = randomUUID();
  const body = JSON.stringify({
    ...TEMPLATE,
    id,
    sequence,
    board: { ...(TEMPLATE.board as object), id: board },
    task: { ...(TEMPLATE.task as object), board_id: board },
  });
  const ts = String(Math.floor(Date.now() / 1000));
  const mac = createHmac('sha256', SVC_SECRET).update(`${ts}.`).update(body).digest('hex');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-svc-event': 'task.updated',
      'x-svc-delivery': id,
      'x-svc-timestamp': ts,
      'x-svc-signature': `v1=${mac}`,
      'content-length': String(Buffer.byteLength(body)),
    },
  };
}

/** One POST; resolves the status, the time to the answer's headers and when it was sent (performance.now()). */
export function post(port: number, event: SignedEvent, agent: Agent): Promise<{ status: number; ms: number; started: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request({ host: '127.0.0.1', port, path: '/webhooks/board', method: 'POST', headers: event.headers, agent }, (res) => {
      const ms = performance.now() - started;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms, started }));
    });
    req.on('error', reject);
    req.end(event.body);
  });
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * Open loop: `rate` deliveries a second for `seconds`, each answer timed, after `warmUp` deliveries
 * sent at once, which open the connections. Connections are opened as the answers in flight need
 * them, as svc does. The deliveries are signed before the loop, so that it only sends: each is
 * still a distinct delivery, its timestamp at most `seconds` old when sent. `onStart` is called as
 * the loop starts; the answer tells this process's CPU time and GC pauses over the loop, and with
 * `marked` each delivery's id, when it was sent and its time to 2xx.
 */
export async function openLoop(
  port: number,
  rate: number,
  seconds: number,
  warmUp: number,
  onStart: () => void,
  marked = false,
): Promise<LatencyFigures & { cpuSeconds: number; sent?: SentMark[] }> {
  const agent = new Agent({ keepAlive: true });
  try {
    await Promise.all(Array.from({ length: warmUp }, () => post(port, signedEvent(`${WARM_UP_BOARD}${randomUUID().slice(-12)}`, 1), agent)));
    const answers: Array<Promise<{ status: number; ms: number; started: number }>> = [];
    const count = Math.max(1, Math.round(rate * seconds));
    const events = Array.from({ length: count }, () => signedEvent(randomUUID(), 1));
    const gc = recordGcPauses();
    onStart();
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      answers.push(post(port, events[i]!, agent));
    }
    const done = await Promise.all(answers);
    const used = process.cpuUsage(cpu);
    gc.stop();
    const ms = done.map((a) => a.ms);
    return {
      p50: percentile(ms, 50),
      p99: percentile(ms, 99),
      count: done.length,
      non2xx: done.filter((a) => a.status < 200 || a.status >= 300).length,
      senderGc: { pauses: gc.pauses.length, ms: gc.pauses.reduce((sum, [, ms]) => sum + ms, 0) },
      cpuSeconds: (used.user + used.system) / 1e6,
      ...(marked ? { sent: done.map((a, i) => sentMark(events[i]!.headers['x-svc-delivery']!, a.started, a.ms)) } : {}),
    };
  } finally {
    agent.destroy();
  }
}
