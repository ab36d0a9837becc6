/**
 * Reads a V8 CPU profile (.cpuprofile, taken by the server child over the measured window) and
 * tells where the time went: self time by function and by package. Idle time is left out, so the
 * shares are of the time the server was busy.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
}

export interface ProfileShare {
  readonly name: string;
  /** Percent of busy samples. */
  readonly percent: number;
}

export interface ProfileSummary {
  readonly busySamples: number;
  readonly functions: ProfileShare[];
  /** Self time by package. */
  readonly packages: ProfileShare[];
  /** Time with a package anywhere on the stack (what it costs including what it calls). */
  readonly inclusive: ProfileShare[];
  /** Self time by package, every package (for an accounting of two stacks side by side). */
  readonly allPackages: ProfileShare[];
  /** Self time by file of svc-webhooks' src/, every file. */
  readonly sourceFiles: ProfileShare[];
}

const IDLE = new Set(['(idle)']);

/** Which package (or part of node) a function belongs to, from its script URL. */
function owner(url: string, functionName: string): string {
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)') return 'V8/native (unattributed)';
  if (url === '') return 'V8 builtins and native';
  if (url.startsWith('node:')) return 'node core';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.includes('/src/')) return 'svc-webhooks (src/)';
  if (url.includes('/bench/')) return 'bench stack code';
  return url;
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url === '' ? '' : ` ${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/').replace(/^file:\/\//, '')}:${lineNumber + 1}`;
  return `${functionName || '(anonymous)'}${where}`;
}

function top(counts: Map<string, number>, total: number, limit: number): ProfileShare[] {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, n]) => ({ name, percent: (100 * n) / total }));
}

export function summariseProfile(file: string, limit = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const sourceFiles = new Map<string, number>();
  let busy = 0;
  for (const id of profile.samples) {
    const node = byId.get(id);
    if (node === undefined || IDLE.has(node.callFrame.functionName)) continue;
    busy++;
    const fn = label(node);
    functions.set(fn, (functions.get(fn) ?? 0) + 1);
    const pkg = owner(node.callFrame.url, node.callFrame.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + 1);
    if (pkg === 'svc-webhooks (src/)') {
      const file = node.callFrame.url.slice(node.callFrame.url.lastIndexOf('/src/') + 1);
      sourceFiles.set(file, (sourceFiles.get(file) ?? 0) + 1);
    }
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (frame.url !== '' && !frame.url.startsWith('node:')) onStack.add(owner(frame.url, frame.functionName));
    }
    for (const name of onStack) inclusive.set(name, (inclusive.get(name) ?? 0) + 1);
  }
  return {
    busySamples: busy,
    functions: top(functions, busy, limit),
    packages: top(packages, busy, limit),
    inclusive: top(inclusive, busy, limit),
    allPackages: top(packages, busy, Infinity),
    sourceFiles: top(sourceFiles, busy, Infinity),
  };
}
