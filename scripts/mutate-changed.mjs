#!/usr/bin/env node
/**
 * The mutation run CI can afford: only the core files that changed since they were last mutated
 * whole. `test/mutation/mutated-files.json` holds a SHA-256 of each core file as its last mutation
 * run saw it (no git history needed, so a shallow clone works too). A clean clone has no
 * incremental record, so `npm run mutate` there would retest all of the core, which takes longer
 * than CI may. Fails, as a full run does, when the changed files score below the threshold.
 *
 *   node scripts/mutate-changed.mjs                   mutate the changed core files (CI)
 *   node scripts/mutate-changed.mjs --record          after a run over the whole core: record the files as it saw them
 *   node scripts/mutate-changed.mjs --record a.ts …   after a run over some files: record those alone (their
 *                                                     content now must be what the run mutated)
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
    const file = relative(root, join(entry.parentPath ?? entry.path, entry.name))
      .split('\\')
      .join('/');
    if (inCore(file))
      out[file] = createHash('sha256')
        .update(readFileSync(join(root, file)))
        .digest('hex');
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

if (process.argv.includes('--record')) {
  const named = process.argv.slice(process.argv.indexOf('--record') + 1);
  const now = coreFiles();
  let files = now;
  if (named.length > 0) {
    const unknown = named.filter((file) => !(file in now));
    if (unknown.length > 0) {
      console.error(`mutate-changed: not core files of src/: ${unknown.join(', ')}`);
      process.exit(2);
    }
    // The record as it was, less the files that no longer exist, with the named files as they are now.
    const kept = JSON.parse(readFileSync(RECORD, 'utf8')).files;
    files = Object.fromEntries(
      Object.entries({ ...kept, ...Object.fromEntries(named.map((file) => [file, now[file]])) })
        .filter(([file]) => file in now)
        .sort(([a], [b]) => a.localeCompare(b)),
    );
  }
  writeFileSync(RECORD, `${JSON.stringify({ files }, null, 2)}\n`);
  console.log(`mutate-changed: recorded ${named.length > 0 ? named.length : Object.keys(files).length} core file(s) in ${relative(root, RECORD)}`);
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
// As the whole-core run that made the record: static mutants (module-level code, which every test
// covers) left out, for they take most of a run's time; four runners on two cores, as a runner
// waiting out a timeout uses no CPU.
const run = spawnSync(
  'npx',
  ['stryker', 'run', '--ignoreStatic', '--concurrency', '4', '--incrementalFile', 'reports/mutation/changed-incremental.json', '--mutate', changed.join(',')],
  { cwd: root, stdio: 'inherit' },
);
process.exit(run.status ?? 1);
