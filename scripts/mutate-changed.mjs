#!/usr/bin/env node
/**
 * The mutation run CI can afford: only the core files that changed since they were last mutated
 * whole. `test/mutation/mutated-files.json` holds a SHA-256 of each core file as its last mutation
 * run saw it (no git history needed, so a shallow clone works too). A clean clone has no
 * incremental record, so `npm run mutate` there would retest all of the core, which takes longer
 * than CI may. Fails, as a full run does, when the changed files score below the threshold.
 *
 *   node scripts/mutate-changed.mjs                        mutate the changed core files (CI)
 *   node scripts/mutate-changed.mjs --record <report.json> …
 *       record the files of a run's reports (the first pass's, then any later one over some of its
 *       lines): each file whose content now is the source the run mutated. Refused when the merged
 *       reports score below the threshold; a file changed since the run is named and not recorded.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergedReports, reportCounts, score, UNDETECTED } from './mutation-report.mjs';

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
  const reports = process.argv.slice(process.argv.indexOf('--record') + 1);
  if (reports.length === 0) {
    console.error('mutate-changed: --record takes the JSON reports of the run to record (reports/mutation/…)');
    process.exit(2);
  }
  const merged = mergedReports(...reports);
  const total = reportCounts(merged);
  if (score(total) < config.thresholds.break) {
    console.error(`mutate-changed: the run scored ${score(total).toFixed(2)} %, under ${config.thresholds.break} %: not recorded`);
    process.exit(1);
  }
  const now = coreFiles();
  const sha = (text) => createHash('sha256').update(text).digest('hex');
  const same = Object.entries(merged.files).filter(([file, data]) => now[file] !== undefined && now[file] === sha(data.source));
  const changedSince = Object.keys(merged.files).filter((file) => !same.some(([f]) => f === file));
  if (changedSince.length > 0) console.log(`mutate-changed: changed since the run, not recorded: ${changedSince.join(', ')}`);
  // The record as it was, less the files that no longer exist, with the run's files as it mutated them.
  const kept = JSON.parse(readFileSync(RECORD, 'utf8')).files;
  const files = Object.fromEntries(
    Object.entries({ ...kept, ...Object.fromEntries(same.map(([file]) => [file, now[file]])) })
      .filter(([file]) => file in now)
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  writeFileSync(RECORD, `${JSON.stringify({ files }, null, 2)}\n`);
  console.log(`mutate-changed: recorded ${same.length} core file(s) in ${relative(root, RECORD)}, scored ${score(total).toFixed(2)} %`);
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
process.exit(mutate(changed));

/**
 * Two passes, as the whole-core run that made the record. The first leaves static mutants out
 * (module-level code, which every test covers; they take most of a run's time) and runs four runners
 * on two cores, as a runner waiting out a timeout uses no CPU. A static mutant that some test also
 * reaches at run time ("hybrid") is then run against that test only, which cannot see a change to
 * what the module did while it loaded: the second pass runs each such survivor against every test.
 */
function mutate(files) {
  const report = join(root, 'reports/mutation/mutation.json');
  const started = Date.now();
  const first = stryker(['--ignoreStatic', '--incrementalFile', 'reports/mutation/changed-incremental.json', '--mutate', files.join(',')]);
  if (!existsSync(report) || statSync(report).mtimeMs < started) return first ?? 1;
  const firstReport = join(root, 'reports/mutation/changed-first-pass.json');
  copyFileSync(report, firstReport);
  // A report also carries the incremental file's results of files not asked for: only these count.
  const asked = (merged) => ({ files: Object.fromEntries(Object.entries(merged.files).filter(([file]) => files.includes(file))) });
  const hybrid = [];
  for (const [file, data] of Object.entries(asked(mergedReports(firstReport)).files)) {
    for (const m of data.mutants) if (m.static === true && UNDETECTED.has(m.status)) hybrid.push(`${file}:${m.location.start.line}-${m.location.end.line}`);
  }
  const reports = [firstReport];
  if (hybrid.length > 0) {
    console.log(`mutate-changed: ${hybrid.length} static mutant(s) reached by tests survived; each again, against every test`);
    const secondStarted = Date.now();
    stryker(['--force', '--incrementalFile', 'reports/mutation/changed-static-incremental.json', '--mutate', [...new Set(hybrid)].join(',')]);
    if (!existsSync(report) || statSync(report).mtimeMs < secondStarted) return 1;
    reports.push(report);
  }
  const total = reportCounts(asked(mergedReports(...reports)));
  const threshold = config.thresholds.break;
  console.log(
    `mutate-changed: ${total.detected} of ${total.result} mutants with a result detected: ${score(total).toFixed(2)} % (fails under ${threshold} %); ${total.ignored} ignored, ${total.errors} errors`,
  );
  return score(total) < threshold ? 1 : 0;
}

function stryker(args) {
  const run = spawnSync('npx', ['stryker', 'run', '--concurrency', '4', ...args], { cwd: root, stdio: 'inherit' });
  return run.status;
}
