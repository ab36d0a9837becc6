/**
 * The webhook watcher's own cost at 10,000 boards: its CPU time and memory while it polls every
 * board of the svc emulator (createFakeSvc, in this process) from a child process of its own,
 * at a compressed interval (10 s for the real 5 minutes: 30 times the request rate), then the
 * per-poll cost at the real interval, and the request rate svc sees.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { WatcherChildReport } from './children/watcher';
import { Child } from './ipc';
import { loadAverage } from './machine';
import { childScript, REPORT_FILE } from './paths';
import { fixed, grouped } from './stats';
import { createFakeSvc, type FakeSvc } from '../src/testing';

export interface WatcherConfig {
  readonly boards: number;
  /** The interval measured: the real one compressed. */
  readonly intervalMs: number;
  /** The interval it stands for. */
  readonly realIntervalMs: number;
  /** The window measured, after the first round. */
  readonly measureMs: number;
}

export const WATCHER_FULL: WatcherConfig = { boards: 10_000, intervalMs: 10_000, realIntervalMs: 5 * 60_000, measureMs: 30_000 };
export const WATCHER_SMOKE: WatcherConfig = { boards: 1_000, intervalMs: 2_000, realIntervalMs: 5 * 60_000, measureMs: 2_000 };
/** The watcher's default budget: what it never exceeds, whatever the boards and interval. */
export const DEFAULT_MAX_RPS = 50;

export interface WatcherReport extends WatcherChildReport {
  readonly config: WatcherConfig;
  /** The mix the emulated svc was set to: boards failing, paused and missing at the start. */
  readonly mix: { readonly failing: number; readonly paused: number; readonly missing: number };
  /** Boards that changed state during the measured window (they begin failing). */
  readonly flipped: number;
  /** What went wrong, if anything: the smoke run's checks. */
  readonly problems: readonly string[];
  readonly measuredAt: Date;
  /** The machine's 1-minute load average before and after: it is shared. */
  readonly load: { readonly before: number; readonly after: number };
}

/** 1 % failing, 0.5 % paused, 0.5 % missing: every kind of state, read every round. */
function mixOf(boards: number): WatcherReport['mix'] {
  return { failing: Math.ceil(boards / 100), paused: Math.ceil(boards / 200), missing: Math.ceil(boards / 200) };
}

/** Calls one of svc's board webhook routes with the person's token. */
async function boardRoute(svc: FakeSvc, method: 'PUT' | 'DELETE', boardId: string): Promise<void> {
  const body =
    method === 'PUT'
      ? JSON.stringify({ url: `https://hooks.example.com/webhooks/boards/${boardId}`, secret: 'the-benchmarks-board-secret-0123456789' })
      : undefined;
  const res = await fetch(`${svc.baseUrl}/api/boards/${boardId}/webhook`, {
    method,
    headers: { authorization: `Bearer ${svc.person.token}` },
    ...(body === undefined ? {} : { body }),
  });
  if (!res.ok) throw new Error(`${method} of board ${boardId}'s webhook answered ${res.status}`);
}

/**
 * The emulated svc with `count` boards, each with its webhook set at a public url the emulator
 * sends nothing to (beyond its allowlist), so a delivery fails at once, with no connection.
 */
async function emulatedBoards(count: number): Promise<{ svc: FakeSvc; boardIds: string[] }> {
  const svc = await createFakeSvc({ clock: 'manual', recordRequests: false });
  const boardIds = [svc.board.id, ...Array.from({ length: count - 1 }, () => svc.addBoard({ managers: [svc.person] }).id)];
  for (let i = 0; i < boardIds.length; i += 50) await Promise.all(boardIds.slice(i, i + 50).map((id) => boardRoute(svc, 'PUT', id)));
  return { svc, boardIds };
}

/** svc fails a delivery to each board: an event each, attempted at once. */
async function failDeliveries(svc: FakeSvc, boardIds: readonly string[]): Promise<void> {
  for (const boardId of boardIds) svc.emitBoardEvent({ type: 'task.updated', boardId });
  await svc.advance(0);
}

async function prepare(svc: FakeSvc, ids: readonly string[], mix: WatcherReport['mix']): Promise<void> {
  await failDeliveries(svc, ids.slice(0, mix.failing));
  for (let i = 0; i < mix.paused; i++) svc.setPlan('free', ids[mix.failing + i]!);
  for (let i = 0; i < mix.missing; i++) await boardRoute(svc, 'DELETE', ids[mix.failing + mix.paused + i]!);
}

export async function measureWatcher(config: WatcherConfig, say: (line: string) => void): Promise<WatcherReport> {
  const loadBefore = loadAverage();
  const measuredAt = new Date();
  const { svc, boardIds } = await emulatedBoards(config.boards);
  const mix = mixOf(config.boards);
  await prepare(svc, boardIds, mix);
  const child = Child.start('watcher', childScript('children/watcher'), { core: 0, nodeFlags: ['--expose-gc'] });
  // About halfway through the window (the first round takes at most an interval), 1 % more boards
  // begin failing: reporting changes is part of the cost.
  const flipped = Math.ceil(config.boards / 100);
  const flip = setTimeout(
    () => {
      void failDeliveries(svc, boardIds.slice(config.boards - flipped));
    },
    config.intervalMs + config.measureMs / 2,
  );
  try {
    say(
      `  ${grouped(config.boards)} boards every ${fixed(config.intervalMs / 1000, 0)} s (standing for ${fixed(config.realIntervalMs / 60_000, 0)} min), measured for ${fixed(config.measureMs / 1000, 0)} s after the first round...`,
    );
    const scale = config.realIntervalMs / config.intervalMs;
    const asked = child.request<WatcherChildReport>(
      {
        type: 'measure',
        baseUrl: svc.baseUrl,
        token: svc.person.token,
        boards: boardIds,
        intervalMs: config.intervalMs,
        measureMs: config.measureMs,
        maxRequestsPerSecond: DEFAULT_MAX_RPS * scale,
      },
      config.intervalMs * 3 + config.measureMs + 30_000,
    );
    const figures = await asked;
    const report: WatcherReport = { ...figures, config, mix, flipped, problems: [], measuredAt, load: { before: loadBefore, after: loadAverage() } };
    return { ...report, problems: problemsOf(report) };
  } finally {
    clearTimeout(flip);
    await child.stop();
    await svc.close();
  }
}

/** The smoke run's checks: every state read as the emulated svc set it, every board polled about once per interval. */
function problemsOf(r: WatcherReport): string[] {
  const found: string[] = [];
  const expected = r.config.boards * (r.seconds / (r.config.intervalMs / 1000));
  if (r.polls < expected * 0.9 || r.polls > expected * 1.1)
    found.push(`the watcher polled ${r.polls} times in ${fixed(r.seconds, 1)} s; one poll per board per interval is ${fixed(expected, 0)}`);
  if ((r.states.paused ?? 0) !== r.mix.paused || (r.states.missing ?? 0) !== r.mix.missing)
    found.push(`the watcher read ${JSON.stringify(r.states)}; the emulated svc held ${JSON.stringify(r.mix)}`);
  if ((r.states.unreachable ?? 0) > 0) found.push(`${r.states.unreachable} webhooks were unreachable: the emulated svc did not keep up`);
  return found;
}

/** The section of BENCHMARKS.md. */
export function watcherSection(r: WatcherReport): string {
  const c = r.config;
  const scale = c.realIntervalMs / c.intervalMs;
  const perPollUs = r.cpuUs / r.polls;
  const realRate = c.boards / (c.realIntervalMs / 1000);
  const realCpuMsPerSecond = (realRate * perPollUs) / 1000;
  const heapPerBoard = (r.heapAfter - r.heapBefore) / c.boards;
  const rows = [
    ['boards watched', grouped(c.boards)],
    ['interval measured (standing for)', `${fixed(c.intervalMs / 1000, 0)} s (${fixed(c.realIntervalMs / 60_000, 0)} min: ${fixed(scale, 0)}× compressed)`],
    ['first round, every board checked once', `${fixed(r.firstRoundSeconds, 1)} s`],
    [
      'polls in the measured window',
      `${grouped(r.polls)} in ${fixed(r.seconds, 1)} s: **${grouped(r.polls / r.seconds)} req/s** (one per board per interval: ${grouped(c.boards / (c.intervalMs / 1000))})`,
    ],
    [
      'request rate to svc at the real interval',
      `**${fixed(realRate, 1)} req/s** (${grouped(c.boards)} / ${fixed(c.realIntervalMs / 1000, 0)} s); never more than \`maxRequestsPerSecond\`, ${DEFAULT_MAX_RPS} by default, nor more than \`maxInFlight\` (8) at once`,
    ],
    ['CPU per poll (user + system, the whole process)', `**${fixed(perPollUs, 0)} µs**`],
    ['CPU at the real interval', `**${fixed(realCpuMsPerSecond, 1)} ms per second** (${fixed(realCpuMsPerSecond / 10, 2)} % of one core)`],
    ['heap per watched board (after GC)', `**${grouped(heapPerBoard)} bytes** (${fixed((r.heapAfter - r.heapBefore) / 1e6, 1)} MB for ${grouped(c.boards)})`],
    ['process RSS at the end', `${fixed(r.rssBytes / 1e6, 0)} MB`],
    ['changes of health reported in the window', `${grouped(r.changes)} (${grouped(r.flipped)} boards began failing halfway)`],
  ];
  const table = ['| | |', '|---|---:|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
  return (
    `The watcher (\`watchWebhooks\`, docs/never-silently-disabled.md) alone in a child process on the compiled code, pinned to one core, polling ${grouped(c.boards)} boards of the svc emulator (\`createFakeSvc\` of \`svc-webhooks/testing\`, in the parent process, over loopback HTTP) with its default budget scaled by the compression (\`maxRequestsPerSecond\` ${DEFAULT_MAX_RPS} × ${fixed(scale, 0)}, \`maxInFlight\` 8), no logger. ` +
    `At the start ${grouped(r.mix.failing)} boards are failing, ${grouped(r.mix.paused)} paused and ${grouped(r.mix.missing)} missing (polled every 30 min instead). ` +
    `The interval is compressed: the CPU per poll measured at the compressed rate is what each poll costs at the real one, and the real interval's CPU is that cost times its request rate. ` +
    `Heap per board is the heap after a GC once every board has been checked, less the heap before the watcher was made, over the boards.\n\n${table}\n\n` +
    `Measured ${r.measuredAt.toISOString()}, the machine's load average (1 min) ${fixed(r.load.before, 2)} before and ${fixed(r.load.after, 2)} after (CPU time is the watcher process's own, whatever else runs). ` +
    `Run it alone with \`npx tsx bench/watcher.ts\` (\`--smoke\` for ${grouped(WATCHER_SMOKE.boards)} boards; \`--write\` puts this section in BENCHMARKS.md).`
  );
}

const HEADING = '## Webhook watcher';

/** Replaces the watcher's section of BENCHMARKS.md, or adds it before the profiles. */
function writeSection(text: string): void {
  const page = readFileSync(REPORT_FILE, 'utf8');
  const section = `${HEADING}\n\n${text}\n\n`;
  const at = page.indexOf(`${HEADING}\n`);
  if (at !== -1) {
    const next = page.indexOf('\n## ', at + HEADING.length);
    writeFileSync(REPORT_FILE, page.slice(0, at) + section + (next === -1 ? '' : page.slice(next + 1)));
    return;
  }
  const before = page.indexOf('## Where the time goes');
  writeFileSync(REPORT_FILE, before === -1 ? `${page.trimEnd()}\n\n${section}` : page.slice(0, before) + section + page.slice(before));
}

/** `npx tsx bench/watcher.ts [--smoke] [--write]`: the watcher's figures alone (`npm run bench` runs them with everything else). */
async function main(): Promise<void> {
  const { compileForChildren } = await import('./compile');
  compileForChildren();
  const smoke = process.argv.includes('--smoke');
  const report = await measureWatcher(smoke ? WATCHER_SMOKE : WATCHER_FULL, (line) => console.log(line));
  const text = watcherSection(report);
  console.log(`\n${text}`);
  for (const problem of report.problems) console.log(`problem: ${problem}`);
  if (report.problems.length > 0) process.exitCode = 1;
  if (process.argv.includes('--write') && !smoke) {
    writeSection(text);
    console.log(`\nwrote the "${HEADING.slice(3)}" section of BENCHMARKS.md`);
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}

export { HEADING as WATCHER_HEADING };
