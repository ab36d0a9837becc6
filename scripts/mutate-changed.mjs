#!/usr/bin/env node
/**
 * The mutation run CI can afford: only the core files that changed since they were last mutated
 * whole. `test/mutation/mutated-files.json` holds a SHA-256 of each core file as its last mutation
 * run saw it (no git history needed, so a shallow clone works too). A clean clone has no
 * incremental record, so `npm run mutate` there would retest all of the core, which takes longer
 * than CI may. Fails, as a full run does, when the changed files score below the threshold.
 *
 *   node scripts/mutate-changed.mjs            mutate the changed core files (CI)
 *   node scripts/mutate-changed.mjs --record   after a run over the whole core: record the files as it saw them
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RECORD = join(root, 'test/mutation/mutated-files.json');
const config = JSON.parse(readFileSync(join(root, 'stryker.config.json'), 'utf8'));
// The config's globs are `src/<folder>/**/*.ts` (to mutate) and `!src/<folder>/**` (never mutated).
const folders = config.mutate.filter((g) => !g.startsWith('!')).map((g) => g.replace(/\*\*\/\*\.ts$/, ''));
const excluded = config.mutate.filter((g) => g.startsWith('!')).map((g) => g.slice(1).replace(/\*\*$/, ''));
const inCore = (file) => file.endsWith('.ts') && folders.some((f) => file.startsWith(f)) && !excluded.some((f) => file.startsWith(f));

function coreFiles() {
  const out = {};
  for (const entry of readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = relative(root, join(entry.parentPath ?? entry.path, entry.name)).split('\\').join('/');
    if (inCore(file)) out[file] = createHash('sha256').update(readFileSync(join(root, file))).digest('hex');
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

if (process.argv.includes('--record')) {
  writeFileSync(RECORD, `${JSON.stringify({ files: coreFiles() }, null, 2)}\n`);
  console.log(`mutate-changed: recorded ${Object.keys(coreFiles()).length} core files in ${relative(root, RECORD)}`);
  process.exit(0);
}

const seen = JSON.parse(readFileSync(RECORD, 'utf8')).files;
const changed = Object.entries(coreFiles())
  .filter(([file, hash]) => seen[file] !== hash)
  .map(([file]) => file);
if (changed.length === 0) {
  console.log('mutate-changed: no core file changed since it was last mutated; nothing to mutate');
  process.exit(0);
}
console.log(`mutate-changed: ${changed.join(', ')}`);
const run = spawnSync('npx', ['stryker', 'run', '--incrementalFile', 'reports/mutation/changed-incremental.json', '--mutate', changed.join(',')], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
