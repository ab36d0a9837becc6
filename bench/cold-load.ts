/**
 * Cold load: a fresh `node` process, in the project that installed the package, requires or
 * imports it, and reports the time that took (wall clock and the process's CPU time), node's own
 * start left out. Every entry point of svc-webhooks beside @octokit/webhooks (ESM only) and
 * standardwebhooks; the loads take turns, one of each per round, on one pinned core.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { childEnv, nodeCommand } from './ipc';
import type { Installs, Subject } from './package';
import { median } from './stats';

export type LoadMode = 'require' | 'import';

export interface ColdLoadSpec {
  readonly name: string;
  readonly label: string;
  readonly subject: Subject;
  /** What is required or imported, from the subject's install. */
  readonly specifier: string;
  readonly mode: LoadMode;
}

export const COLD_LOADS: readonly ColdLoadSpec[] = [
  { name: 'svc-require', label: "svc-webhooks, require('svc-webhooks')", subject: 'svc-webhooks', specifier: 'svc-webhooks', mode: 'require' },
  { name: 'svc-import', label: "svc-webhooks, import('svc-webhooks')", subject: 'svc-webhooks', specifier: 'svc-webhooks', mode: 'import' },
  { name: 'svc-testing-require', label: 'svc-webhooks/testing, require', subject: 'svc-webhooks', specifier: 'svc-webhooks/testing', mode: 'require' },
  { name: 'svc-testing-import', label: 'svc-webhooks/testing, import', subject: 'svc-webhooks', specifier: 'svc-webhooks/testing', mode: 'import' },
  // The CLI's module, as bin/svc-webhooks.js requires it (not an export of the package).
  {
    name: 'svc-cli-require',
    label: 'svc-webhooks CLI (dist/cli/main.js), require',
    subject: 'svc-webhooks',
    specifier: './node_modules/svc-webhooks/dist/cli/main.js',
    mode: 'require',
  },
  // svc-webhooks's runtime dependencies, from its install: what the default setup adds when it
  // makes its logger (pino) and reads its first body on Node (raw-body).
  { name: 'pino-require', label: 'pino (a dependency of svc-webhooks), require', subject: 'svc-webhooks', specifier: 'pino', mode: 'require' },
  { name: 'raw-body-require', label: 'raw-body (a dependency of svc-webhooks), require', subject: 'svc-webhooks', specifier: 'raw-body', mode: 'require' },
  { name: 'octokit-import', label: '@octokit/webhooks, import (ESM only)', subject: '@octokit/webhooks', specifier: '@octokit/webhooks', mode: 'import' },
  { name: 'standard-require', label: 'standardwebhooks, require', subject: 'standardwebhooks', specifier: 'standardwebhooks', mode: 'require' },
  { name: 'standard-import', label: 'standardwebhooks, import', subject: 'standardwebhooks', specifier: 'standardwebhooks', mode: 'import' },
];

export interface ColdLoadResult {
  readonly name: string;
  readonly label: string;
  readonly mode: LoadMode;
  /** Medians over runs, in ms. */
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly runs: number;
}

function script(spec: ColdLoadSpec): string {
  const report = 'const cpu = process.cpuUsage(cpu0); process.stdout.write(JSON.stringify([performance.now() - t0, (cpu.user + cpu.system) / 1000]));';
  const load =
    spec.mode === 'import' ? `import(${JSON.stringify(spec.specifier)}).then(() => { ${report} })` : `require(${JSON.stringify(spec.specifier)}); ${report}`;
  return `const cpu0 = process.cpuUsage(), t0 = performance.now(); ${load}`;
}

function loadOnce(spec: ColdLoadSpec, cwd: string): [number, number] {
  const { command, args } = nodeCommand(0, ['-e', script(spec)]);
  const out = spawnSync(command, args, { cwd, encoding: 'utf8', env: childEnv() });
  if (out.status !== 0) throw new Error(`bench: loading ${spec.specifier} failed: ${out.stderr}`);
  return JSON.parse(out.stdout) as [number, number];
}

export function measureColdLoads(installs: Installs, runs: number): ColdLoadResult[] {
  const times = new Map(COLD_LOADS.map((s) => [s.name, { wall: [] as number[], cpu: [] as number[] }]));
  for (let i = 0; i < runs; i++) {
    for (const spec of COLD_LOADS) {
      const [wall, cpu] = loadOnce(spec, installs.dirs[spec.subject]);
      times.get(spec.name)!.wall.push(wall);
      times.get(spec.name)!.cpu.push(cpu);
    }
  }
  return COLD_LOADS.map((spec) => ({
    name: spec.name,
    label: spec.label,
    mode: spec.mode,
    wallMs: median(times.get(spec.name)!.wall),
    cpuMs: median(times.get(spec.name)!.cpu),
    runs,
  }));
}

/** The install of svc-webhooks, for the startup children that load the package as a user's server does. */
export function installedPackage(installs: Installs): string {
  return join(installs.dirs['svc-webhooks'], 'node_modules', 'svc-webhooks');
}
