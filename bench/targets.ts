/** The targets, checked against the figures of one run. */
import type { ColdLoadResult } from './cold-load';
import type { InstallSize } from './package';
import type { StartupResult } from './startup';
import type { StoreReport } from './children/store';
import type { InboxReport } from './inbox';
import type { Cell } from './load';
import { MAX_PATH_FILES, type DeliveryPath } from './delivery-path';
import { fixed, grouped } from './stats';
import { figures, ratio } from './summary';

export interface Target {
  readonly target: string;
  readonly measured: string;
  /** Undefined when the run did not produce the figure (a stack failed). */
  readonly met: boolean | undefined;
  /** A figure shown for context, with no threshold. */
  readonly info?: true;
}

function check(value: number, ok: (v: number) => boolean): boolean | undefined {
  return Number.isFinite(value) ? ok(value) : undefined;
}

export function evaluateTargets(cells: readonly Cell[], startup: readonly StartupResult[], store: StoreReport | undefined, inbox?: InboxReport): Target[] {
  const targets: Target[] = [];
  // The headline: the mount most users have (app.use with every default) against the most used peer.
  const defaultRps = ratio(cells, '2kb', 'svc-board-express', 'octokit-express', 'rps');
  const defaultCpu = ratio(cells, '2kb', 'svc-board-express', 'octokit-express', 'cpuUsPerRequest');
  targets.push({
    target: 'the default mount (board, app.use, every default) ≥ 1.1× @octokit/webhooks req/s and ≤ its CPU per request (Express, 2 KB)',
    measured: `${fixed(defaultRps, 2)}× req/s, ${fixed(defaultCpu, 2)}× CPU per request`,
    met: Number.isFinite(defaultRps) && Number.isFinite(defaultCpu) ? defaultRps >= 1.1 && defaultCpu <= 1 : undefined,
  });
  targets.push({
    target: 'the default Express mount level with @octokit/webhooks: ≥ 1.0× its req/s at ≤ 1.0× its CPU per request (Express 5, 2 KB, the same paired run)',
    measured: `${fixed(defaultRps, 2)}× req/s, ${fixed(defaultCpu, 2)}× CPU per request`,
    met: Number.isFinite(defaultRps) && Number.isFinite(defaultCpu) ? defaultRps >= 1 && defaultCpu <= 1 : undefined,
  });
  const largeRps = ratio(cells, '256kb', 'svc-board-express', 'octokit-express', 'rps');
  targets.push({
    target: 'the default mount ahead of @octokit/webhooks at 250 KB (req/s ≥ 1×)',
    measured: `${fixed(largeRps, 2)}× req/s, ${fixed(ratio(cells, '256kb', 'svc-board-express', 'octokit-express', 'cpuUsPerRequest'), 2)}× CPU per request`,
    met: check(largeRps, (v) => v >= 1),
  });
  const logged = figures(cells, 'svc-board-express', '2kb').cpuUsPerRequest - figures(cells, 'svc-board-express-unlogged', '2kb').cpuUsPerRequest;
  targets.push({
    target: 'the cost of the one log line per delivery: CPU µs per request of the default mount over the same mount with logging off (2 KB; shown, no target)',
    measured: `${fixed(logged, 1)} µs (req/s with logging off ${fixed(ratio(cells, '2kb', 'svc-board-express-unlogged', 'svc-board-express', 'rps'), 2)}× the default)`,
    met: undefined,
    info: true,
  });
  const perLine = figures(cells, 'svc-board-express-pino-default', '2kb').cpuUsPerRequest - figures(cells, 'svc-board-express-unlogged', '2kb').cpuUsPerRequest;
  targets.push({
    target: "the same line written through pino()'s own destination, one write per line (2 KB; shown, no target): why the default logger writes in batches",
    measured: `${fixed(perLine, 1)} µs per request over logging off (req/s ${fixed(ratio(cells, '2kb', 'svc-board-express-pino-default', 'svc-board-express', 'rps'), 2)}× the default mount's)`,
    met: undefined,
    info: true,
  });
  const redis = ratio(cells, '2kb', 'svc-board-redis', 'svc-board-express', 'rps');
  targets.push({
    target: 'the default mount with the Redis store (local redis-server), req/s vs the memory store (2 KB; shown, no target)',
    measured: `${fixed(redis, 2)}× (${fixed(figures(cells, 'svc-board-redis', '2kb').rps, 0)} against ${fixed(figures(cells, 'svc-board-express', '2kb').rps, 0)} req/s)`,
    met: undefined,
    info: true,
  });
  const mounts = [
    ['svc-bot-express', 'bot, inside Express (app.use)'],
    ['svc-board-front', 'board, in front of Express (createNodeHandler(mw, app))'],
  ] as const;
  for (const [svc, label] of mounts) {
    const vsOctokit = ratio(cells, '2kb', svc, 'octokit-express', 'rps');
    targets.push({
      target: `svc-webhooks ${label} ≥ 1.1× @octokit/webhooks req/s (2 KB)`,
      measured: `${fixed(vsOctokit, 2)}× (CPU per request ${fixed(ratio(cells, '2kb', svc, 'octokit-express', 'cpuUsPerRequest'), 2)}×)`,
      met: check(vsOctokit, (v) => v >= 1.1),
    });
  }
  for (const [svc, label] of [['svc-board-express', 'board, inside Express (app.use)'], ...mounts] as const) {
    const vsFloor = ratio(cells, '2kb', svc, 'express-floor', 'rps');
    targets.push({
      target: `svc-webhooks ${label} within 10 % of the Express floor's req/s (2 KB)`,
      measured: `${fixed(vsFloor, 2)}× (CPU per request ${fixed(ratio(cells, '2kb', svc, 'express-floor', 'cpuUsPerRequest'), 2)}×)`,
      met: check(vsFloor, (v) => v >= 0.9),
    });
  }
  for (const [svc, floor, label] of [
    ['svc-board-express', 'express-floor', 'Express'],
    ['svc-board-node', 'node-floor', 'node:http'],
  ] as const) {
    const cpu = ratio(cells, '256kb', svc, floor, 'cpuUsPerRequest');
    targets.push({
      target: `CPU per request at 256 KB ≤ 1.15× the floor (svc-webhooks board, ${label}, vs the ${label} floor)`,
      measured: `${fixed(cpu, 2)}×`,
      met: check(cpu, (v) => v <= 1.15),
    });
  }
  for (const size of ['2kb', '256kb'] as const) {
    const resolver = ratio(cells, size, 'svc-board-resolver', 'svc-board-express', 'rps');
    targets.push({
      target: `board with a secret resolver over 10,000 boards within 5 % of the single-secret mount's req/s (${size === '2kb' ? '2 KB' : '250 KB'})`,
      measured: `${fixed(resolver, 3)}× (CPU per request ${fixed(ratio(cells, size, 'svc-board-resolver', 'svc-board-express', 'cpuUsPerRequest'), 3)}×)`,
      met: check(resolver, (v) => v >= 0.95),
    });
  }
  const node2kb = ratio(cells, '2kb', 'svc-board-node', 'node-floor', 'rps');
  targets.push({
    target: 'without Express: svc-webhooks board as a node:http handler, req/s vs the node floor (2 KB; shown, no target)',
    measured: `${fixed(node2kb, 2)}× (CPU per request ${fixed(ratio(cells, '2kb', 'svc-board-node', 'node-floor', 'cpuUsPerRequest'), 2)}×)`,
    met: undefined,
    info: true,
  });
  // OpenTelemetry: svc-board-node has @opentelemetry/api installed and no provider registered.
  const idle = ratio(cells, '2kb', 'svc-board-node', 'svc-board-node-no-otel', 'cpuUsPerRequest');
  targets.push({
    target: 'OpenTelemetry with no provider registered: CPU per request within noise (≤ 1.05×) of the api not installed (board, node:http, 2 KB)',
    measured: `${fixed(idle, 2)}× (req/s ${fixed(ratio(cells, '2kb', 'svc-board-node', 'svc-board-node-no-otel', 'rps'), 2)}×)`,
    met: check(idle, (v) => v <= 1.05),
  });
  const traced = ratio(cells, '2kb', 'svc-board-node-otel', 'svc-board-node-no-otel', 'cpuUsPerRequest');
  targets.push({
    target:
      'OpenTelemetry SDK registered (every span recorded, metrics aggregated): CPU per request vs the api not installed (board, node:http, 2 KB; shown, no target)',
    measured: `${fixed(traced, 2)}× (req/s ${fixed(ratio(cells, '2kb', 'svc-board-node-otel', 'svc-board-node-no-otel', 'rps'), 2)}×)`,
    met: undefined,
    info: true,
  });
  for (const name of ['svc-board-express', 'svc-board-node']) {
    const s = startup.find((r) => r.stack === name);
    // Process start is the child's own clock origin (performance.timeOrigin); the prober's spawn-to-
    // received time also holds fork/exec and the trip back, and is shown beside it.
    const ms = s?.marks.firstResponse ?? Number.NaN;
    targets.push({
      target: `first 2xx within 150 ms of process start (${s?.label ?? name})`,
      measured: `${fixed(ms, 0)} ms from process start to the first 2xx sent (${fixed(s?.spawnToFirst2xxMs, 0)} ms from spawn() to it received)`,
      met: check(ms, (v) => v <= 150),
    });
  }
  const bytes = store === undefined ? Number.NaN : Math.max(store.burst.heapBytesPerId, store.spread.heapBytesPerId);
  targets.push({
    target: `in-memory de-dup store ≤ 64 bytes per remembered id at ${store === undefined ? '1,000,000' : store.ids.toLocaleString('en-US')} ids (heap growth, worst of burst and spread)`,
    measured: `${fixed(bytes, 1)} bytes`,
    met: check(bytes, (v) => v <= 64),
  });
  if (inbox !== undefined) {
    const f = inbox.inbox;
    targets.push({
      target: `inbox mode: time to 2xx ≤ 5 ms at the 99th percentile (${grouped(inbox.slowHandlerMs)} ms handler, ${inbox.latencyRate} deliveries/s, local redis-server)`,
      measured: `p99 ${fixed(f.p99, 2)} ms, p50 ${fixed(f.p50, 2)} ms (in the receiver: p99 ${fixed(f.receiverP99, 2)} ms); its floor on this machine and load (answered before the claim and the enqueue): p99 ${fixed(inbox.floor.p99, 2)} ms, p50 ${fixed(inbox.floor.p50, 2)} ms`,
      met: check(f.p99, (v) => v <= 5),
    });
  }
  return targets;
}

export interface PackageFigures {
  readonly coldLoads: readonly ColdLoadResult[];
  readonly sizes: readonly InstallSize[];
  readonly startup: readonly StartupResult[];
  readonly cells: readonly Cell[];
}

const MB = (bytes: number) => `${fixed(bytes / 1e6, 1)} MB`;

/** Issue 30's targets: light to install, quick to load and to serve the first delivery, a Fetch handler near its floor. */
export function packageTargets({ coldLoads, sizes, startup, cells }: PackageFigures): Target[] {
  const targets: Target[] = [];
  const load = (name: string) => coldLoads.find((c) => c.name === name);
  const octokit = load('octokit-import');
  const imported = load('svc-import');
  const required = load('svc-require');
  const importRatio = (imported?.wallMs ?? Number.NaN) / (octokit?.wallMs ?? Number.NaN);
  targets.push({
    target: "cold load of svc-webhooks ≤ 1.5× @octokit/webhooks' (import, installed packages, fresh processes)",
    measured: `${fixed(importRatio, 2)}× (${fixed(imported?.wallMs, 1)} ms against ${fixed(octokit?.wallMs, 1)} ms; CPU ${fixed((imported?.cpuMs ?? Number.NaN) / (octokit?.cpuMs ?? Number.NaN), 2)}×); require('svc-webhooks') ${fixed(required?.wallMs, 1)} ms, ${fixed((required?.wallMs ?? Number.NaN) / (octokit?.wallMs ?? Number.NaN), 2)}×`,
    met: check(importRatio, (v) => v <= 1.5),
  });
  for (const [svc, floor, label] of [
    ['svc-board-express', 'express-floor', 'Express 5'],
    ['svc-board-node', 'node-floor', 'node:http'],
  ] as const) {
    const s = startup.find((r) => r.stack === svc)?.marks.firstResponse ?? Number.NaN;
    const f = startup.find((r) => r.stack === floor)?.marks.firstResponse ?? Number.NaN;
    targets.push({
      target: `first 2xx after process start ≤ its floor + 25 ms (${label}, installed package)`,
      measured: `+${fixed(s - f, 0)} ms (${fixed(s, 0)} ms against the floor's ${fixed(f, 0)} ms)`,
      met: check(s - f, (v) => v <= 25),
    });
  }
  const size = (subject: InstallSize['subject']) => sizes.find((x) => x.subject === subject);
  const svc = size('svc-webhooks');
  const peer = size('@octokit/webhooks');
  const standard = size('standardwebhooks');
  targets.push({
    target: "installed size with runtime dependencies ≤ @octokit/webhooks' (npm install of the package alone into an empty project)",
    measured: `${MB(svc?.bytes ?? Number.NaN)} in ${svc?.packages ?? '—'} packages, ${fixed((svc?.bytes ?? Number.NaN) / (peer?.bytes ?? Number.NaN), 2)}× @octokit/webhooks' ${MB(peer?.bytes ?? Number.NaN)} in ${peer?.packages ?? '—'} (standardwebhooks: ${MB(standard?.bytes ?? Number.NaN)} in ${standard?.packages ?? '—'})`,
    met: svc === undefined || peer === undefined ? undefined : svc.bytes <= peer.bytes,
  });
  for (const [svc, floor, server] of [
    ['svc-board-web', 'web-floor', '@hono/node-server'],
    ['svc-board-bun', 'bun-floor', 'Bun.serve'],
  ] as const) {
    const web = ratio(cells, '2kb', svc, floor, 'rps');
    targets.push({
      target: `Fetch handler (createWebHandler) ≥ 0.9× its floor on ${server} (req/s, 2 KB)`,
      measured: `${fixed(web, 2)}× (CPU per request ${fixed(ratio(cells, '2kb', svc, floor, 'cpuUsPerRequest'), 2)}×)`,
      met: check(web, (v) => v >= 0.9),
    });
  }
  return targets;
}

/** The path of one delivery through the code: how many files of src/ a reader follows. */
export function pathTargets(path: DeliveryPath): Target[] {
  return [
    {
      target: `one board delivery (the default Express mount, 2 KB) passes ≤ ${MAX_PATH_FILES} files of src/ (V8 precise coverage of that one request, bench/delivery-path.ts)`,
      measured: `${path.files.length} files, ${path.functionCount} functions`,
      met: path.files.length <= MAX_PATH_FILES,
    },
  ];
}
