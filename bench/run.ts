/**
 * `npm run bench` / `npm run bench:smoke`: compiles the code for the child processes, runs the
 * micro benchmarks, startup, the load rounds and the profiles, prints the tables and (full run only)
 * rewrites BENCHMARKS.md. Exits non-zero when any stack fails to answer a signed delivery with 2xx,
 * or a forged one is not refused before parsing: the smoke run checks correctness, never speed.
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { BodySize } from './bodies';
import type { StageReport } from './children/stages';
import { measureColdLoads, type ColdLoadResult } from './cold-load';
import { compileForChildren } from './compile';
import { FULL, SMOKE, type BenchConfig } from './config';
import { INBOX_FULL, INBOX_SMOKE, measureInbox, type InboxReport } from './inbox';
import { runCell, runRounds, withLoadGenerator, type Cell } from './load';
import { describeMachine, loadAverage } from './machine';
import { measureStages, measureStore } from './micro';
import { preparePackages, type Installs } from './package';
import { REPORT_FILE, ROOT } from './paths';
import { summariseProfile } from './profile';
import { packageSection, renderMarkdown, renderTerminal, startupSection, type ProfileResult } from './report';
import { stack, type StackName } from './stacks/index';
import { measureStartup, type StartupResult } from './startup';
import { fixed, grouped, median } from './stats';
import { evaluateTargets, packageTargets, pathTargets } from './targets';
import { deliveryPathOfCompiled } from './delivery-path';
import { measureWatcher, WATCHER_FULL, WATCHER_SMOKE } from './watcher';
import { postgresMigrationSql } from '../src/dedup/postgres-sql';
import { PostgresServer } from '../test/support/postgres-server';
import { RedisServer } from '../test/support/redis-server';

const say = (line: string) => process.stdout.write(`${line}\n`);

function describeCell(cell: Cell, retry: boolean): string {
  const head = `  round ${cell.round} ${cell.size.padEnd(5)} ${cell.stack.padEnd(18)}`;
  if (!cell.ok) return `${head} FAILED: ${cell.problem}`;
  const tail = retry ? `  (other processes took ${fixed(cell.otherCores, 2)} cores: run again)` : '';
  return `${head} ${grouped(cell.rps).padStart(7)} req/s  ${fixed(cell.cpuUsPerRequest, 1).padStart(7)} µs CPU/req  p99 ${fixed(cell.p99Ms, 2)} ms${tail}`;
}

/** The profiled runs: svc-webhooks in Express (beside @octokit/webhooks) and on node:http, and the Express floor, to show where the time goes. */
async function profile(config: BenchConfig): Promise<ProfileResult[]> {
  const results: ProfileResult[] = [];
  for (const [name, size] of [
    ['svc-board-express', '2kb'],
    ['octokit-express', '2kb'],
    ['express-floor', '2kb'],
    ['svc-board-node', '2kb'],
    ['svc-board-express', '256kb'],
  ] as const) {
    const cell = await withLoadGenerator((loadgen) => runCell(stack(name), size as BodySize, 0, config, loadgen, { profileName: `${name}-${size}` }));
    if (!cell.ok || cell.profile === undefined) throw new Error(`profiling ${name} failed: ${cell.problem}`);
    results.push({
      title: `${stack(name).label}, ${size === '2kb' ? '2 KB' : '250 KB'} body`,
      stack: name,
      size,
      cpuUsPerRequest: cell.cpuUsPerRequest,
      summary: summariseProfile(cell.profile),
    });
    say(`  profiled ${name} ${size}: ${relative(ROOT, cell.profile)}`);
  }
  return results;
}

/** Correctness problems of a run: what makes the smoke (and the full run) exit non-zero. */
function problems(cells: readonly Cell[], stages: readonly StageReport[]): string[] {
  const found = cells.filter((c) => !c.ok).map((c) => `${c.stack} ${c.size} round ${c.round}: ${c.problem}`);
  for (const r of stages) {
    if (r.forged !== undefined && (r.forged.status !== 401 || r.forged.parses !== 0)) {
      found.push(`a forged ${r.size} request was answered ${r.forged.status} after ${r.forged.parses} JSON.parse calls (want 401, none)`);
    }
  }
  return found;
}

async function startBenchPostgres(): Promise<PostgresServer> {
  const postgres = await PostgresServer.start();
  await postgres.query(postgresMigrationSql());
  await postgres.query('CREATE TABLE bench_effects (delivery_id text PRIMARY KEY)');
  process.env.SVC_BENCH_POSTGRES_URL = postgres.url;
  return postgres;
}

/** The value after `--name` on the command line, if any. */
function option(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? undefined : process.argv[at + 1];
}

/**
 * `npm run bench -- --only a,b[,c] [--rounds n] [--size 2kb|256kb]`: the load rounds of a few stacks
 * only, printed as medians with ratios to the first stack (`--profile`: then a CPU profile of each,
 * under .bench/); BENCHMARKS.md is left as it is. For
 * checking one change quickly; the figures of record come from the full run.
 */
async function compare(names: readonly string[]): Promise<void> {
  const stacks = names.map((name) => stack(name as StackName));
  const size = option('size');
  const config: BenchConfig = { ...FULL, rounds: Number(option('rounds') ?? 4), sizes: size === undefined ? ['2kb'] : [size as BodySize] };
  const needsRedis = names.some((name) => name.includes('redis'));
  const redis = needsRedis ? await RedisServer.start({ appendOnly: false }) : undefined;
  if (redis !== undefined) process.env.SVC_BENCH_REDIS_URL = redis.url;
  const postgres = names.some((name) => name.includes('postgres')) ? await startBenchPostgres() : undefined;
  try {
    const cells = await runRounds(config, (cell, retry) => say(describeCell(cell, retry)), stacks);
    if (process.argv.includes('--profile')) {
      for (const s of stacks) {
        const cell = await withLoadGenerator((loadgen) => runCell(s, config.sizes[0]!, 0, config, loadgen, { profileName: `${s.name}-${config.sizes[0]}` }));
        say(`  profiled ${s.name}: ${cell.profile === undefined ? cell.problem : relative(ROOT, cell.profile)}`);
      }
    }
    say('');
    for (const s of config.sizes) {
      const of = (name: StackName, pick: (c: Cell) => number) => median(cells.filter((c) => c.ok && c.stack === name && c.size === s).map(pick));
      const base = stacks[0]!.name;
      for (const { name } of stacks) {
        const rps = of(name, (c) => c.rps);
        const cpu = of(name, (c) => c.cpuUsPerRequest);
        say(
          `${s.padEnd(6)} ${name.padEnd(24)} ${grouped(rps).padStart(7)} req/s ${fixed(cpu, 1).padStart(7)} µs/req   vs ${base}: req/s ${fixed(rps / of(base, (c) => c.rps), 3)}×  CPU ${fixed(cpu / of(base, (c) => c.cpuUsPerRequest), 3)}×`,
        );
      }
    }
  } finally {
    await Promise.all([redis?.close(), postgres?.close()]);
  }
}

/** Packs and installs the package beside its peers, then times their cold loads. */
function packageFigures(config: BenchConfig): { installs: Installs; coldLoads: ColdLoadResult[] } {
  say('package: npm pack, then each package installed alone into an empty project...');
  const installs = preparePackages();
  // The startup children load svc-webhooks from this install (bench/stacks/installed.ts).
  process.env.SVC_BENCH_PACKAGE_PROJECT = installs.dirs['svc-webhooks'];
  say(`cold loads: ${config.coldLoadRuns} fresh process(es) per entry point...`);
  return { installs, coldLoads: measureColdLoads(installs, config.coldLoadRuns) };
}

/**
 * \`npm run bench -- --package [--rounds n]\`: the package's figures alone (installed size, cold
 * loads, startup) and the Fetch handler against its floor, with their targets; BENCHMARKS.md is
 * left as it is. For checking a change to the build quickly; the figures of record come from the
 * full run.
 */
async function packageOnly(): Promise<void> {
  const config: BenchConfig = { ...FULL, rounds: Number(option('rounds') ?? 2), sizes: ['2kb'] };
  const { installs, coldLoads } = packageFigures(config);
  say('startup...');
  const startup: StartupResult[] = await measureStartup(config.startupRuns);
  const cells = await runRounds(config, (cell, retry) => say(describeCell(cell, retry)), [
    stack('svc-board-web'),
    stack('web-floor'),
    stack('svc-board-bun'),
    stack('bun-floor'),
  ]);
  say('');
  say(packageSection({ sizes: installs.sizes, coldLoads }));
  say('');
  say(startupSection(startup));
  say('');
  for (const t of packageTargets({ coldLoads, sizes: installs.sizes, startup, cells }))
    say(`- ${t.target}: ${t.measured} (${t.met === undefined ? 'no figure' : t.met ? 'met' : 'not met'})`);
}

async function main(): Promise<void> {
  if (process.argv.includes('--package')) {
    say(`compiled ${compileForChildren()} files for the child processes`);
    return packageOnly();
  }
  const only = option('only');
  if (only !== undefined) {
    say(`compiled ${compileForChildren()} files for the child processes`);
    return compare(only.split(','));
  }
  const config = process.argv.includes('--smoke') ? SMOKE : FULL;
  const started = Date.now();
  const machine = describeMachine();
  const before = loadAverage();
  say(`svc-webhooks bench (${config.smoke ? 'smoke' : 'full'}): ${machine.cpu}, ${machine.cores} cores, node ${machine.node}`);
  say(`compiled ${compileForChildren()} files for the child processes`);

  say('the path of one delivery...');
  const path = deliveryPathOfCompiled(false);
  say('stage costs...');
  const stages = await measureStages(config);
  say('de-dup store...');
  const store = await measureStore(config);
  const { installs, coldLoads } = packageFigures(config);
  say('startup...');
  const startup = await measureStartup(config.startupRuns);
  say(`load: ${config.rounds} round(s) of ${config.measureSeconds} s per stack and body...`);
  // The Redis-store stack talks to a local redis-server of its own (no persistence: a throughput run),
  // the PostgreSQL-store stacks to a local postgres (fsync off, commits synchronous).
  const redis = await RedisServer.start({ appendOnly: false });
  process.env.SVC_BENCH_REDIS_URL = redis.url;
  const postgres = await startBenchPostgres();
  let cells: Cell[];
  let inbox: InboxReport;
  try {
    cells = await runRounds(config, (cell, retry) => say(describeCell(cell, retry)));
  } finally {
    await Promise.all([redis.close(), postgres.close()]);
  }
  say('inbox...');
  // A redis-server of its own, the load rounds' servers stopped first: its time to 2xx is a tail
  // figure, not to share the machine with what those rounds left running.
  const inboxRedis = await RedisServer.start({ appendOnly: false });
  try {
    inbox = await measureInbox(inboxRedis.url, config.smoke ? INBOX_SMOKE : INBOX_FULL, say);
  } finally {
    await inboxRedis.close();
  }
  say('webhook watcher...');
  const watcher = await measureWatcher(config.smoke ? WATCHER_SMOKE : WATCHER_FULL, say);
  const profiles = config.profile ? (say('profiles...'), await profile(config)) : [];

  const targets = [
    ...evaluateTargets(cells, startup, store, inbox),
    ...packageTargets({ coldLoads, sizes: installs.sizes, startup, cells }),
    ...pathTargets(path),
  ];
  const results = {
    config,
    machine,
    startedAt: new Date(started),
    seconds: (Date.now() - started) / 1000,
    loadAverage: { before, after: loadAverage() },
    cells,
    stages,
    store,
    inbox,
    watcher,
    startup,
    coldLoads,
    sizes: installs.sizes,
    profiles,
    targets,
  };
  say('');
  say(renderTerminal(results));
  if (!config.smoke) {
    writeFileSync(REPORT_FILE, renderMarkdown(results));
    say(`\nwrote ${relative(ROOT, REPORT_FILE)} (${fixed(results.seconds / 60, 1)} min)`);
  }
  const found = problems(cells, stages);
  for (const [mode, figures] of [
    ['inbox', inbox.inbox],
    ['floor', inbox.floor],
    ['direct', inbox.direct],
  ] as const) {
    if (figures.non2xx > 0) found.push(`${figures.non2xx} of ${figures.count} deliveries to the ${mode}-mode receiver were not answered 2xx`);
  }
  for (const problem of watcher.problems) found.push(`webhook watcher: ${problem}`);
  if (found.length > 0) {
    say(`\n${found.length} problem(s):`);
    for (const p of found) say(`  ${p}`);
    process.exitCode = 1;
  } else if (config.smoke) {
    say(`\nsmoke passed in ${fixed(results.seconds, 1)} s: every stack answered signed deliveries with 2xx`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
