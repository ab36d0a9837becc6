/** Renders the results of one run as BENCHMARKS.md (and the short form printed to the terminal). */
import type { BodySize } from './bodies';
import type { StageReport } from './children/stages';
import type { StoreReport } from './children/store';
import { MAX_OTHER_CORES, type InboxReport } from './inbox';
import { describeStalls } from './stalls';
import type { BenchConfig } from './config';
import type { Cell } from './load';
import type { Machine } from './machine';
import type { ProfileShare, ProfileSummary } from './profile';
import type { ColdLoadResult } from './cold-load';
import type { InstallSize } from './package';
import type { StartupResult } from './startup';
import { fixed, grouped } from './stats';
import { STACKS, type StackName } from './stacks/index';
import { figures, ratio } from './summary';
import type { Target } from './targets';
import { closingNotes } from './notes';
import { watcherSection, WATCHER_HEADING, type WatcherReport } from './watcher';

export interface ProfileResult {
  readonly title: string;
  readonly stack: StackName;
  readonly size: BodySize;
  /** CPU per request of the profiled window (the profiler's own cost included). */
  readonly cpuUsPerRequest: number;
  readonly summary: ProfileSummary;
}

export interface RunResults {
  readonly config: BenchConfig;
  readonly machine: Machine;
  readonly startedAt: Date;
  readonly seconds: number;
  readonly loadAverage: { readonly before: number; readonly after: number };
  readonly cells: readonly Cell[];
  readonly stages: readonly StageReport[];
  readonly store: StoreReport;
  readonly inbox: InboxReport;
  readonly watcher: WatcherReport;
  readonly startup: readonly StartupResult[];
  readonly coldLoads: readonly ColdLoadResult[];
  readonly sizes: readonly InstallSize[];
  readonly profiles: readonly ProfileResult[];
  readonly targets: readonly Target[];
}

const SIZE_LABEL: Record<BodySize, string> = { '2kb': '2 KB body (2,254 bytes)', '256kb': '250 KB body (256,000 bytes)' };
const REFERENCES: ReadonlyArray<[StackName, string]> = [
  ['node-floor', 'node floor'],
  ['express-floor', 'Express floor'],
  ['octokit-express', '@octokit/webhooks'],
  ['standard-express', 'standardwebhooks'],
];

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

// A load generator this busy was itself the limit of req/s.
const LOADGEN_BOUND = 0.85;

export function loadTable(cells: readonly Cell[], size: BodySize): string {
  let bound = false;
  const rows = STACKS.map((s) => {
    const f = figures(cells, s.name, size);
    if (f.rounds === 0) return [s.label, `failed: ${f.failures.join('; ')}`, '', '', '', '', '', ''];
    const limited = f.loadgenCpuShare >= LOADGEN_BOUND;
    bound ||= limited;
    return [
      s.label,
      `${grouped(f.rps)}${limited ? ' †' : ''}`,
      fixed(f.p50Ms, 2),
      fixed(f.p99Ms, 2),
      fixed(f.cpuUsPerRequest, 1),
      fixed(f.peakRssMb, 0),
      `${fixed(f.loadgenCpuShare * 100, 0)} %`,
      fixed(f.otherCores, 2),
    ];
  });
  const text = table(['Stack', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'peak RSS MB', 'load-gen CPU', 'other CPU (cores)'], rows);
  return bound
    ? `${text}\n\n† The load generator was busy ${LOADGEN_BOUND * 100} % of its core or more: it, not the server, set this req/s; compare CPU per request instead.`
    : text;
}

function ratioTable(cells: readonly Cell[], size: BodySize): string {
  const rows = STACKS.filter((s) => !s.name.endsWith('floor')).map((s) => [
    s.label,
    ...REFERENCES.map(([ref]) =>
      ref === s.name ? '—' : `${fixed(ratio(cells, size, s.name, ref, 'rps'), 2)}× · ${fixed(ratio(cells, size, s.name, ref, 'cpuUsPerRequest'), 2)}×`,
    ),
  ]);
  return table(['Stack', ...REFERENCES.map(([, label]) => `vs ${label}`)], rows);
}

function stagesSection(stages: readonly StageReport[]): string {
  return stages
    .map((r) => {
      const sum = r.stages.reduce((t, s) => t + s.us, 0);
      const rows = r.stages.map((s) => [s.stage, fixed(s.us, 2), fixed(s.floorUs, 2)]);
      rows.push(['**sum of the stages**', `**${fixed(sum, 2)}**`, '']);
      rows.push(['whole middleware, one delivery (in memory, no socket)', fixed(r.wholeUs, 2), fixed(r.floorWholeUs, 2)]);
      rows.push(['orchestration: whole − sum of the stages', fixed(r.wholeUs - sum, 2), '']);
      let text = `**${SIZE_LABEL[r.size]}**\n\n${table(['Stage', 'svc-webhooks µs', 'floor µs'], rows)}`;
      if (r.forged !== undefined) {
        text +=
          `\n\nForged 256 KB request (well-formed, wrong secret): answered **${r.forged.status}** in **${fixed(r.forged.us, 1)} µs**, ` +
          `with **${r.forged.parses}** calls to JSON.parse while forged requests ran (it is refused after the MAC check, before parsing); ` +
          `an authentic one takes ${fixed(r.wholeUs, 1)} µs.`;
      }
      return text;
    })
    .join('\n\n');
}

/** The installed sizes and the cold loads of one run. */
export function packageSection({ sizes, coldLoads }: { sizes: readonly InstallSize[]; coldLoads: readonly ColdLoadResult[] }): string {
  const installs = table(
    ['Package, installed alone', 'version', 'packages', 'bytes', 'MB'],
    sizes.map((s) => [s.subject, s.version, String(s.packages), grouped(s.bytes), fixed(s.bytes / 1e6, 2)]),
  );
  const octokit = coldLoads.find((c) => c.name === 'octokit-import');
  const loads = table(
    ['Entry point', 'wall ms', 'CPU ms', 'vs @octokit/webhooks (wall)'],
    coldLoads.map((c) => [c.label, fixed(c.wallMs, 1), fixed(c.cpuMs, 1), c === octokit ? '—' : `${fixed(c.wallMs / (octokit?.wallMs ?? Number.NaN), 2)}×`]),
  );
  return `${installs}\n\n${loads}`;
}

export function startupSection(startup: readonly StartupResult[]): string {
  const mark = (r: StartupResult, k: string) => fixed(r.marks[k], 1);
  const rows = startup.map((r) => [
    r.label,
    `**${fixed(r.spawnToFirst2xxMs, 1)}**`,
    mark(r, 'entry'),
    mark(r, 'express'),
    mark(r, 'loaded'),
    mark(r, 'created'),
    mark(r, 'listening'),
    mark(r, 'firstResponse'),
  ]);
  return table(
    ['Stack', 'spawn → first 2xx received', 'node ready', 'Express loaded', 'all modules loaded', 'middleware built', 'listening', 'first 2xx sent'],
    rows,
  );
}

function storeSection(store: StoreReport): string {
  const rows = [
    ['all ids within one generation (a burst)', fixed(store.burst.tableBytesPerId, 1), fixed(store.burst.heapBytesPerId, 1), String(store.burst.generations)],
    [
      'ids spread evenly over the retention window',
      fixed(store.spread.tableBytesPerId, 1),
      fixed(store.spread.heapBytesPerId, 1),
      String(store.spread.generations),
    ],
  ];
  return (
    `${table([`${grouped(store.ids)} remembered ids`, 'bytes/id (id tables)', 'bytes/id (heap growth after GC)', 'generations'], rows)}\n\n` +
    `At ${grouped(store.ids)} ids: **${grouped(store.claimCommitPerSecond)}** claim + commit pairs per second (a new delivery), ` +
    `**${grouped(store.duplicateClaimPerSecond)}** claims of a remembered id per second (a repeat), over ${grouped(store.ops)} operations each.`
  );
}

function inboxSection(inbox: InboxReport): string {
  const row = (mode: string, f: InboxReport['inbox']) => [
    mode,
    fixed(f.p50, 2),
    fixed(f.p99, 2),
    fixed(f.receiverP50, 2),
    fixed(f.receiverP99, 2),
    String(f.count),
    String(f.non2xx),
  ];
  const latency = table(
    ['mode', 'time to 2xx p50 (ms)', 'p99 (ms)', 'in the receiver p50 (ms)', 'p99 (ms)', 'deliveries', 'not 2xx'],
    [
      row('inbox (acknowledge now, a worker runs the handler)', inbox.inbox),
      row('floor of the inbox (answered before the claim and the enqueue)', inbox.floor),
      row('direct (the handler runs in the request)', inbox.direct),
    ],
  );
  const ordered = table(
    ['boards', 'events', 'events/s (one worker, 0 ms handler)'],
    inbox.ordered.map((o) => [grouped(o.boards), grouped(o.events), grouped(o.perSecond)]),
  );
  return (
    `Handler of ${grouped(inbox.slowHandlerMs)} ms, ${inbox.latencyRate} deliveries/s (open loop) to one receiver process with the Redis store, ` +
    `once it has taken ${grouped(inbox.warmUp)} deliveries (its code optimised by the JIT and its young generation settled, as in a receiver that has run for a while). ` +
    `The sender is a process of its own; in inbox mode one worker process (concurrency 2,000) runs the handlers meanwhile, ` +
    `${inbox.pinned ? "the receiver and redis-server pinned to one core (they take turns: the receiver waits while Redis works) and the worker to the other, so that neither waits behind the worker's CPU, as on machines of their own; the sender runs where the scheduler puts it" : 'every process where the scheduler puts it'}. ` +
    `The floor is the same processes doing the same work, but its receiver answers as soon as it has read, verified and parsed the delivery (the node floor's code) and does the inbox's work on it (claim, enqueue, commit) after the answer instead of before it: no receiver that verifies a delivery is faster on this machine under this load. ` +
    `Time to 2xx is timed by the sender, from the request to the answer's headers; "in the receiver" is the receiver's own time from the request's arrival to its answer (its delivery records; the floor's own timing), ` +
    `which leaves out the sender's and the kernel's share. The sender signs its deliveries before its loop and runs with a young generation larger than the loop allocates, so that no GC pause of its own counts as the receiver's time (its pauses during the loops: ${[inbox.inbox, inbox.floor, inbox.direct].map((f) => f.senderGc.pauses).join(', ')}, for the inbox, the floor and direct). ` +
    `A measurement during which other processes took more than ${MAX_OTHER_CORES} cores is run again (${inbox.attempts} attempts at most, the least disturbed kept); ` +
    `they took ${fixed(inbox.inbox.otherCores, 2)} cores during the inbox measurement, ${fixed(inbox.floor.otherCores, 2)} during the floor's and ${fixed(inbox.direct.otherCores, 2)} during the direct one:\n\n${latency}\n\n` +
    `The machine's own stalls, measured just before, with nothing of the bench running: a process that does nothing but read the clock in a loop (\`bench/children/stalls.ts\`, one per core, ${fixed(inbox.stalls[0]?.seconds ?? 0, 0)} s) was kept from running ${describeStalls(inbox.stalls)}. ` +
    `Each such stall adds its length to the deliveries it meets, in the floor as in the inbox, whatever the code does.\n\n` +
    `One receiver process enqueues **${grouped(inbox.enqueuedPerSecond)}** deliveries/s (10 connections, closed loop, no worker running); ` +
    `one worker process then runs **${grouped(inbox.processedPerSecond)}** deliveries/s with a 0 ms handler (concurrency 10; warm-up deliveries counted in).\n\n` +
    `Board order (\`ordered: true\`), events enqueued in sequence order per board, interleaved across boards, then handled by one worker (the rate counts in the 50 warm-up deliveries the receiver took first, each on a board of its own):\n\n${ordered}`
  );
}

/**
 * The default Express mount and @octokit/webhooks' in Express, from their profiles side by side:
 * each package's share of the busy samples times the profiled window's CPU per request, so that the
 * rows of a column add up to that figure.
 */
function accountingSection(profiles: readonly ProfileResult[]): string {
  const svc = profiles.find((p) => p.stack === 'svc-board-express' && p.size === '2kb');
  const peer = profiles.find((p) => p.stack === 'octokit-express' && p.size === '2kb');
  if (svc === undefined || peer === undefined) return '';
  const us = (p: ProfileResult, rows: readonly ProfileShare[], name: string) => ((rows.find((r) => r.name === name)?.percent ?? 0) * p.cpuUsPerRequest) / 100;
  const names = [...new Set([...svc.summary.allPackages, ...peer.summary.allPackages].map((r) => r.name))];
  const packageRows = names
    .map((name) => ({ name, a: us(svc, svc.summary.allPackages, name), b: us(peer, peer.summary.allPackages, name) }))
    .filter((r) => r.a >= 0.5 || r.b >= 0.5)
    .sort((x, y) => Math.max(y.a, y.b) - Math.max(x.a, x.b));
  const row = (name: string, a: number, b: number) => [name, fixed(a, 1), fixed(b, 1), `${a - b >= 0 ? '+' : ''}${fixed(a - b, 1)}`];
  const rest = (p: ProfileResult) => p.cpuUsPerRequest - packageRows.reduce((sum, r) => sum + (p === svc ? r.a : r.b), 0);
  const files = svc.summary.sourceFiles.filter((f) => (f.percent * svc.cpuUsPerRequest) / 100 >= 0.5);
  return [
    `**The default Express mount and @octokit/webhooks, side by side** (2 KB; CPU µs per request of each profiled window, split by each package's share of the self-time samples; the profiler adds its own cost to both):`,
    table(
      ['Package (self time)', 'svc-webhooks µs', '@octokit/webhooks µs', 'difference'],
      [
        ...packageRows.map((r) => row(r.name, r.a, r.b)),
        row('packages under 0.5 µs', rest(svc), rest(peer)),
        row('**total**', svc.cpuUsPerRequest, peer.cpuUsPerRequest),
      ],
    ),
    `svc-webhooks' own code (src/) by file, µs per request of self time:`,
    table(
      ['File', 'µs'],
      files.map((f) => [f.name, fixed((f.percent * svc.cpuUsPerRequest) / 100, 1)]),
    ),
  ].join('\n\n');
}

function profileSection(profiles: readonly ProfileResult[]): string {
  return profiles
    .map((p) => {
      const share = (rows: ProfileSummary['functions']) => rows.map((r) => [r.name.replace(/\|/g, '\\|'), `${fixed(r.percent, 1)} %`]);
      return [
        `**${p.title}** (${grouped(p.summary.busySamples)} busy samples)`,
        table(['Package (self time)', 'share'], share(p.summary.packages.slice(0, 8))),
        table(['Package on the stack (inclusive)', 'share'], share(p.summary.inclusive.slice(0, 8))),
        table(['Function (self time)', 'share'], share(p.summary.functions)),
      ].join('\n\n');
    })
    .join('\n\n');
}

function targetsTable(targets: readonly Target[]): string {
  const verdict = (t: Target) => (t.info ? 'shown' : t.met === undefined ? 'no figure' : t.met ? '**met**' : '**not met**');
  return table(
    ['Target', 'Measured', 'Verdict'],
    targets.map((t) => [t.target, t.measured, verdict(t)]),
  );
}

export function renderMarkdown(r: RunResults): string {
  const m = r.machine;
  const c = r.config;
  const packages = Object.entries(m.packages)
    .map(([n, v]) => `${n} ${v}`)
    .join(', ');
  const notes = closingNotes(r);
  return `# Benchmarks

Generated by \`npm run bench\` on ${r.startedAt.toISOString()} in ${fixed(r.seconds / 60, 1)} minutes; the text is in \`bench/report.ts\` and \`bench/notes.ts\`, so edit those, not this file.

## Machine

- CPU: ${m.cpu}, ${m.cores} cores; memory ${m.memoryGiB} GiB; Linux ${m.kernel}
- Node ${m.node}; ${packages}
- Server and load generator pinned to one core each with \`taskset\`: ${m.pinned ? 'yes' : 'no (taskset missing or fewer than 2 cores)'}
- Load average (1 min) before and after the run: ${fixed(r.loadAverage.before, 2)}, ${fixed(r.loadAverage.after, 2)}

## How to run

\`\`\`sh
npm run bench        # the full run (about ten minutes on 2 cores): prints the tables and rewrites BENCHMARKS.md
npm run bench:smoke  # a few seconds: every stack must answer 2xx to a signed delivery (no timing checks); CI runs it
npm run bench -- --only svc-board-express,octokit-express  # a few stacks' load rounds and their ratios; BENCHMARKS.md untouched
npm run bench -- --package  # the package alone: installed sizes, cold loads, startup, the Fetch handler against its floor; BENCHMARKS.md untouched
npx tsx bench/inbox.ts --latency --rounds 3  # the inbox's time to 2xx alone (drop --latency for every inbox figure)
npx tsx bench/inbox.ts --latency --phases  # the same, traced: where each delivery's time to 2xx went
npx tsx bench/watcher.ts --write  # the webhook watcher at 10,000 boards alone; rewrites only its section
npx tsx bench/delivery-path.ts --list  # the files and functions of src/ one board delivery passes, each named
\`\`\`

## Method

- **Stacks.** Each runs alone in its own child process on 127.0.0.1, with only its own modules loaded. The floors do by hand what any correct receiver must: read the body, check the timestamp and the HMAC in constant time, \`JSON.parse\`. svc-webhooks runs with every default: the whole pipeline (capture, verify, parse, schema validation, de-dup in the memory store, routing), answering 200 after a trivial handler, and logging one line per delivery at the default level (\`info\`) through the default pino logger to stdout, which is \`/dev/null\` in the bench (the same mount with a silent logger shows what that line costs). Its body reader is raw-body with the library's deadline around it; the floors read by hand (the stage table shows both). It is mounted three ways: inside Express 5 with \`app.use()\` (board and bot), as a plain node:http handler (\`createNodeHandler(mw)\`), and in front of an Express 5 app in the same server (\`createNodeHandler(mw, app)\`: deliveries never enter Express, other requests go on to the app). @octokit/webhooks is \`createNodeMiddleware\` in Express 5; standardwebhooks is \`Webhook#verify\` in an Express 5 route after \`express.raw()\`. The OpenTelemetry cost is measured on the node:http mount three ways: with \`@opentelemetry/api\` installed and no provider registered (the plain node:http stack), with the api hidden from the process as if not installed (the floor of that comparison), and with the SDK registered (\`BasicTracerProvider\` with a \`BatchSpanProcessor\`, a \`MeterProvider\` with a periodic reader, both exporting to exporters that drop what they get). The Fetch handler (\`createWebHandler\`) is measured against the Fetch floor (the floor's work as a Fetch handler by hand) on two servers: on node through \`@hono/node-server\`, and on Bun through \`Bun.serve\` (the \`bun\` dev dependency; those two server children run under Bun). All get byte-for-byte the same bodies, signed the way each expects.
- **Distinct deliveries.** Every request is a new delivery: the load generator (autocannon ${m.packages.autocannon}) builds it in \`setupRequest\` just before sending it, writing a fresh \`randomUUID()\` into the body (and the X-Svc-Delivery / webhook-id / X-GitHub-Delivery header), a current timestamp (and for bot updates a current \`createdAt\`), and signing it (\`bench/signing.ts\`). Nothing is replayed, so the de-dup store sees only new ids and no stack answers from a cache.
- **Processes.** Children run the code compiled to plain JavaScript (\`.bench/js\`, made by \`bench/compile.ts\` with TypeScript's transpiler), on \`node\` with no loader, as a user's server runs. The server and the load generator are separate processes, each pinned to its own core; NODE_OPTIONS and NODE_EXTRA_CA_CERTS are unset for them.
- **Rounds.** ${c.rounds} rounds; odd rounds run every stack in one order and even rounds in the reverse (A B C … C B A), so no stack always runs right after the same one (a cell's place in the order measurably tells on it), on the 2 KB body, then on the 250 KB body, each in a fresh server process (one load generator process serves the whole run): a probe delivery must be answered 2xx, then ${c.warmupSeconds} s of warm-up, then ${c.measureSeconds} s measured with ${c.connections} keep-alive connections. Figures are medians over rounds; ratios are medians of the per-round ratios.
- **Figures.** req/s counts 2xx answers over the measured window. Latency is measured in the load generator per request (autocannon's own histogram keeps whole milliseconds). Server CPU per request is \`process.cpuUsage()\` of the server process (all its threads, GC included) over the measured window, divided by the requests completed in it. Peak RSS is the server's \`process.resourceUsage().maxRSS\`.
- **Other load.** The machine is shared. "other CPU" is what other processes took during the measured window (\`/proc/stat\` minus the two children); a cell during which they took more than ${c.maxOtherCores} cores is run again (at most ${c.retries} time per cell and ${c.retryBudget} in the run), and the least disturbed attempt is kept. A load generator near 100 % means it, not the server, limited req/s; CPU per request is unaffected by that.

## Targets

${targetsTable(r.targets)}
${notes === '' ? '' : `\n### Targets not met, and what would close them\n\n${notes}\n`}
## Load

Medians over ${c.rounds} rounds.

### ${SIZE_LABEL['2kb']}

${loadTable(r.cells, '2kb')}

### ${SIZE_LABEL['256kb']}

${loadTable(r.cells, '256kb')}

### Ratios

Each cell is *req/s ratio · CPU-per-request ratio* of the row's stack to the column's: more than 1× req/s is faster, less than 1× CPU is cheaper.

**${SIZE_LABEL['2kb']}**

${ratioTable(r.cells, '2kb')}

**${SIZE_LABEL['256kb']}**

${ratioTable(r.cells, '256kb')}

## Stage costs

Each stage of the board pipeline alone, in one process, on the same bodies (median of ${c.stageBatches} batches; \`bench/children/stages.ts\`). The floor column is the hand-written floor's cost for the same step.

${stagesSection(r.stages)}

## Package

\`npm pack\` (which builds dist/ with \`scripts/build.mjs\`), then each package installed alone with \`npm install <package>\` into an empty project under \`.bench/package/\`: the packed svc-webhooks, and @octokit/webhooks and standardwebhooks at this repository's locked versions. "packages" counts the directories of node_modules with a package.json (the package itself included), "bytes" the sizes of every file in node_modules.

Cold load: a fresh \`node\` process in that project, pinned to one core, times \`require()\` or \`import()\` of the entry point (wall clock, and the process's CPU time), node's own start left out; medians of ${r.coldLoads[0]?.runs ?? 0} processes per entry point, the entry points taking turns. @octokit/webhooks is ESM only.

${packageSection(r)}

## Startup

svc-webhooks is the installed package here (as above), the floors the bench's own code. Milliseconds. "spawn → first 2xx received" is measured by a prober process on the other core, from \`spawn()\` until the answer to the signed delivery it sends as soon as the child writes that it listens (it does not poll, which would take CPU from the starting process). The other columns are marks inside the child, in ms since its process started; the schemas are compiled at build time (src/generated/validators.ts), so "middleware built" includes no compilation. Medians of ${r.startup[0]?.runs ?? 0} starts per stack, the stacks taking turns.

${startupSection(r.startup)}

## De-dup store

${storeSection(r.store)}

## Inbox (acknowledge now, process later)

${inboxSection(r.inbox)}

${WATCHER_HEADING}

${watcherSection(r.watcher)}

## Where the time goes

CPU profiles of the server over a measured window (V8 sampling profiler, 250 µs), idle time left out.

${r.profiles.length === 0 ? 'No profiles in this run.' : [accountingSection(r.profiles), profileSection(r.profiles)].filter((x) => x !== '').join('\n\n')}
`;
}

/** The short form for the terminal: the two load tables and the targets. */
export function renderTerminal(r: Pick<RunResults, 'cells' | 'targets' | 'inbox' | 'watcher'>): string {
  return [
    'Inbox',
    inboxSection(r.inbox),
    '',
    'Webhook watcher',
    watcherSection(r.watcher),
    '',
    `Load, ${SIZE_LABEL['2kb']}`,
    loadTable(r.cells, '2kb'),
    '',
    `Load, ${SIZE_LABEL['256kb']}`,
    loadTable(r.cells, '256kb'),
    '',
    'Targets',
    targetsTable(r.targets),
  ].join('\n');
}
