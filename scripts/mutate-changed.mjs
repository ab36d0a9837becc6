#!/usr/bin/env node
/**
 * The mutation run CI can afford: only the core files changed since the last full run (the commit
 * named in test/mutation/last-full-run). A clean clone has no incremental record, so `npm run
 * mutate` there would retest all of the core, which takes longer than CI may. Fails, as a full run
 * does, when the changed files score below the configured threshold. Where that commit is not in the
 * history (a shallow clone), every core file counts as changed.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const config = JSON.parse(readFileSync(join(root, 'stryker.config.json'), 'utf8'));
// The config's globs are `src/<folder>/**/*.ts` (to mutate) and `!src/<folder>/**` (never mutated).
const folders = config.mutate.filter((g) => !g.startsWith('!')).map((g) => g.replace(/\*\*\/\*\.ts$/, ''));
const excluded = config.mutate.filter((g) => g.startsWith('!')).map((g) => g.slice(1).replace(/\*\*$/, ''));
const inCore = (file) => file.endsWith('.ts') && folders.some((f) => file.startsWith(f)) && !excluded.some((f) => file.startsWith(f));

const git = (...args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
const base = readFileSync(join(root, 'test/mutation/last-full-run'), 'utf8').trim();

let files;
if (git('cat-file', '-e', `${base}^{commit}`).status === 0) {
  const diff = git('diff', '--name-only', '--diff-filter=AMR', base, 'HEAD', '--', 'src');
  if (diff.status !== 0) throw new Error(`mutate-changed: git diff failed: ${diff.stderr}`);
  files = diff.stdout.split('\n').filter(inCore);
  if (files.length === 0) {
    console.log(`mutate-changed: no core file changed since the last full run (${base.slice(0, 12)}); nothing to mutate`);
    process.exit(0);
  }
} else {
  console.log(`mutate-changed: ${base.slice(0, 12)} is not in this clone's history; mutating the whole core`);
}

const args = ['stryker', 'run', '--incrementalFile', 'reports/mutation/changed-incremental.json'];
if (files !== undefined) args.push('--mutate', files.join(','));
console.log(`mutate-changed: ${files === undefined ? 'the whole core' : files.join(', ')}`);
const run = spawnSync('npx', args, { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
