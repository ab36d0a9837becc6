/**
 * The load runs: each cell (a stack and a body size) gets a fresh server child and a fresh load
 * generator child; rounds run every cell in turn (A B C ... C B A), so slow drift of the
 * machine spreads over all stacks instead of biasing the ones that ran last.
 */
import type { BodySize } from './bodies';
import type { LoadRequest, LoadResult, ProbeResult } from './children/loadgen';
import type { BenchConfig } from './config';
import { machineBusySeconds } from './host-cpu';
import { Child } from './ipc';
import { childScript } from './paths';
import { STACKS, type Stack, type StackName } from './stacks/index';

export interface Cell {
  readonly stack: StackName;
  readonly size: BodySize;
  readonly round: number;
  readonly ok: boolean;
  /** Why the cell failed: a non-2xx answer, a transport error, a crash. */
  readonly problem?: string;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerRequest: number;
  readonly peakRssMb: number;
  readonly loadgenCpuShare: number;
  readonly completed: number;
  /** CPU other processes used during the measured window, in cores (NaN where /proc/stat is missing). */
  readonly otherCores: number;
  readonly profile?: string;
}

interface ServerWindow {
  readonly cpuMicros: number;
  readonly handled: number;
  readonly maxRssKb: number;
  readonly profile?: string;
}

const IPC_SLACK_MS = 20_000;

function failed(stack: Stack, size: BodySize, round: number, problem: string): Cell {
  return {
    stack: stack.name,
    size,
    round,
    ok: false,
    problem,
    rps: 0,
    p50Ms: 0,
    p99Ms: 0,
    cpuUsPerRequest: 0,
    peakRssMb: 0,
    loadgenCpuShare: 0,
    completed: 0,
    otherCores: Number.NaN,
  };
}

function describeFailure(result: LoadResult): string | undefined {
  if (result.ok === 0) return 'no 2xx answer';
  if (result.non2xx > 0) return `non-2xx answers: ${JSON.stringify(result.statusCodes)}`;
  if (result.errors > 0 || result.timeouts > 0) return `${result.errors} transport errors, ${result.timeouts} timeouts`;
  return undefined;
}

export interface CellOptions {
  readonly profileName?: string;
}

/** Runs `work` with a load generator child, stopped afterwards; one serves many cells. */
export async function withLoadGenerator<T>(work: (loadgen: Child) => Promise<T>): Promise<T> {
  const loadgen = Child.start('load generator', childScript('children/loadgen'), { core: 1 });
  try {
    return await work(loadgen);
  } finally {
    await loadgen.stop();
  }
}

/** One measured run on a fresh server: probe, warm up, then measure over a window both children agree on. */
export async function runCell(stack: Stack, size: BodySize, round: number, config: BenchConfig, loadgen: Child, options: CellOptions = {}): Promise<Cell> {
  const bun = stack.runtime === 'bun';
  const server = Child.start(`server ${stack.name}`, childScript(bun ? 'children/bun-server' : 'children/server'), {
    core: 0,
    args: [stack.name],
    runtime: stack.runtime ?? 'node',
  });
  try {
    const { port } = await server.request<{ port: number }>({ type: 'listen' }, IPC_SLACK_MS);
    const load = (seconds: number): LoadRequest => ({
      type: 'run',
      url: `http://127.0.0.1:${port}${stack.path}`,
      scheme: stack.scheme,
      webhook: stack.webhook,
      size,
      seconds,
      connections: config.connections,
    });
    const probe = await loadgen.request<ProbeResult>({ ...load(0), type: 'probe' }, IPC_SLACK_MS);
    if (probe.status < 200 || probe.status > 299) return failed(stack, size, round, `a signed delivery was answered ${probe.status}: ${probe.body}`);
    if (config.warmupSeconds > 0) {
      const warm = await loadgen.request<LoadResult>(load(config.warmupSeconds), config.warmupSeconds * 1000 + IPC_SLACK_MS);
      const problem = describeFailure(warm);
      if (problem !== undefined) return failed(stack, size, round, `warm-up: ${problem}`);
    }
    const profile = options.profileName !== undefined;
    await server.request({ type: 'begin', profile }, IPC_SLACK_MS);
    const busyBefore = machineBusySeconds();
    const result = await loadgen.request<LoadResult>(load(config.measureSeconds), config.measureSeconds * 1000 + IPC_SLACK_MS);
    const busyAfter = machineBusySeconds();
    const window = await server.request<ServerWindow>({ type: 'end', profileName: options.profileName }, IPC_SLACK_MS);
    const ours = window.cpuMicros / 1e6 + result.cpuShare * result.seconds;
    const otherCores = busyBefore === undefined || busyAfter === undefined ? Number.NaN : Math.max(0, busyAfter - busyBefore - ours) / result.seconds;
    const problem = describeFailure(result);
    if (problem !== undefined) return failed(stack, size, round, problem);
    const completed = result.ok + result.non2xx;
    return {
      stack: stack.name,
      size,
      round,
      ok: true,
      rps: result.ok / result.seconds,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      cpuUsPerRequest: window.cpuMicros / completed,
      peakRssMb: window.maxRssKb / 1024,
      loadgenCpuShare: result.cpuShare,
      completed,
      otherCores,
      ...(window.profile === undefined ? {} : { profile: window.profile }),
    };
  } catch (err) {
    return failed(stack, size, round, err instanceof Error ? err.message : String(err));
  } finally {
    await server.stop();
  }
}

/**
 * A cell during which other processes took more than `config.maxOtherCores` is run again, up to
 * `config.retries` times and while the run's budget of retries lasts (so a busy machine cannot
 * stretch the run without bound); the least disturbed attempt is kept.
 */
async function runUndisturbed(
  stack: Stack,
  size: BodySize,
  round: number,
  config: BenchConfig,
  loadgen: Child,
  budget: { retries: number },
  report: (cell: Cell, retry: boolean) => void,
): Promise<Cell> {
  let best: Cell | undefined;
  for (let attempt = 0; ; attempt++) {
    const cell = await runCell(stack, size, round, config, loadgen);
    const retry = cell.ok && cell.otherCores > config.maxOtherCores && attempt < config.retries && budget.retries > 0;
    report(cell, retry);
    if (!cell.ok) return cell;
    if (best === undefined || cell.otherCores < best.otherCores) best = cell;
    if (!retry) return best;
    budget.retries--;
  }
}

/**
 * Every round runs every stack on every body size; odd rounds in the listed order, even rounds in
 * the reverse. A cell's place in the order tells on its figures (the one right after another server
 * has stopped fares worse), so no stack may always follow the same one: over an even number of
 * rounds each pair of stacks runs as often one way round as the other. With more than one lane (the
 * smoke run only: it checks answers, not speed) lanes run side by side.
 */
export async function runRounds(config: BenchConfig, report: (cell: Cell, retry: boolean) => void, stacks: readonly Stack[] = STACKS): Promise<Cell[]> {
  const plan: Array<{ stack: Stack; size: BodySize; round: number }> = [];
  for (let round = 1; round <= config.rounds; round++) {
    const order = round % 2 === 1 ? stacks : [...stacks].reverse();
    for (const size of config.sizes) for (const stack of order) plan.push({ stack, size, round });
  }
  const cells: Cell[] = []; // filled by index as the lanes finish
  const budget = { retries: config.retryBudget };
  let next = 0;
  const lane = (loadgen: Child) => async () => {
    for (let i = next++; i < plan.length; i = next++) {
      const { stack, size, round } = plan[i]!;
      cells[i] = await runUndisturbed(stack, size, round, config, loadgen, budget, report);
    }
  };
  await Promise.all(Array.from({ length: config.lanes }, () => withLoadGenerator((loadgen) => lane(loadgen)())));
  return cells;
}
