/**
 * The load generator child: drives one server with autocannon. Every request is a distinct,
 * freshly signed delivery made in `setupRequest`, right before it is sent. Latencies are recorded
 * here in microseconds, because autocannon's own histogram keeps whole milliseconds.
 */
import autocannon from 'autocannon';
import { request as httpRequest } from 'node:http';
import { bodyTemplate, type BodySize, type Webhook } from '../bodies';
import { serveRequests, type Message } from '../ipc';
import { deliveries, type Scheme } from '../signing';

export interface LoadRequest extends Message {
  readonly url: string;
  readonly scheme: Scheme;
  readonly webhook: Webhook;
  readonly size: BodySize;
  readonly seconds: number;
  readonly connections: number;
}

export interface LoadResult {
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly seconds: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU time of this process over the run, as a share of one core: near 1 means the generator was the limit. */
  readonly cpuShare: number;
  readonly statusCodes: Record<string, number>;
}

export interface ProbeResult {
  readonly status: number;
  readonly body: string;
}

// Bounds the latency samples kept (a 10 s run at 100k req/s fits).
const MAX_SAMPLES = 1_000_000;

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function run(message: LoadRequest): Promise<LoadResult> {
  const next = deliveries(message.scheme, bodyTemplate(message.webhook, message.size));
  const samples = new Float64Array(MAX_SAMPLES);
  let count = 0;
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  const instance = autocannon({
    url: message.url,
    connections: message.connections,
    duration: message.seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => {
          const delivery = next();
          return { ...req, headers: delivery.headers, body: delivery.body };
        },
      },
    ],
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300 && count < MAX_SAMPLES) samples[count++] = ms;
  });
  const result = await instance;
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const sorted = samples.subarray(0, count).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = (stat as { count: number }).count;
  return {
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    cpuShare: (cpu.user + cpu.system) / 1e6 / seconds,
    statusCodes,
  };
}

/** One delivery sent with node's client, so a failure shows the server's answer, not just a count. */
function probe(message: LoadRequest & { forge?: boolean }): Promise<ProbeResult> {
  const delivery = deliveries(message.scheme, bodyTemplate(message.webhook, message.size), message.forge === true)();
  return new Promise((resolve, reject) => {
    const req = httpRequest(message.url, { method: 'POST', headers: { ...delivery.headers, 'Content-Length': delivery.body.length } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body.slice(0, 300) }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('probe timed out')));
    req.on('error', reject);
    req.end(delivery.body);
  });
}

serveRequests({
  run: (message) => run(message as LoadRequest),
  probe: (message) => probe(message as LoadRequest),
});
