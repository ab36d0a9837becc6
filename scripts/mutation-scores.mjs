#!/usr/bin/env node
/**
 * The per-file score table of docs/development/mutation-testing.md, from Stryker's JSON reports:
 * the first report is a run over the whole core; each later one (a run over some files or lines)
 * replaces the results of the mutants it tested. Scores are killed and timed-out mutants over all
 * with a result, no coverage counted as undetected; ignored mutants and errors are not counted.
 *
 *   node scripts/mutation-scores.mjs reports/mutation/mutation.json [later.json ...]
 *   node scripts/mutation-scores.mjs --survivors <the same reports>   each undetected mutant and its line
 */
import { counts, mergedReports, UNDETECTED } from './mutation-report.mjs';

const survivorsOnly = process.argv.includes('--survivors');
const reports = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (reports.length === 0) {
  process.stderr.write('usage: node scripts/mutation-scores.mjs [--survivors] <whole-core report.json> [later report.json ...]\n');
  process.exit(2);
}
const whole = mergedReports(...reports);

const total = { result: 0, detected: 0, survived: 0, noCoverage: 0, ignored: 0, errors: 0 };
const rows = [];
for (const [file, data] of Object.entries(whole.files).sort(([a], [b]) => a.localeCompare(b))) {
  const c = counts(data.mutants);
  for (const k of Object.keys(total)) total[k] += c[k];
  if (survivorsOnly) {
    for (const m of data.mutants.filter((m) => UNDETECTED.has(m.status))) {
      const line = data.source.split('\n')[m.location.start.line - 1].trim();
      console.log(
        `${file}:${m.location.start.line}:${m.location.start.column} ${m.status} ${m.mutatorName} → ${JSON.stringify(m.replacement ?? '')}\n    ${line.slice(0, 160)}`,
      );
    }
  }
  const shown = c.result === 0 ? '—' : `${((100 * c.detected) / c.result).toFixed(1)} %`;
  rows.push(`| \`${file}\` | ${c.result} | ${c.detected} | ${c.survived} | ${c.noCoverage} | ${shown} |`);
}
if (!survivorsOnly) {
  const n = (x) => x.toLocaleString('en-US');
  console.log('| File | Mutants with a result | Detected | Survived | No coverage | Score |\n|---|---|---|---|---|---|');
  console.log(rows.join('\n'));
  console.log(
    `| **the core** | ${n(total.result)} | ${n(total.detected)} | ${n(total.survived)} | ${n(total.noCoverage)} | ${((100 * total.detected) / total.result).toFixed(1)} % |`,
  );
  console.log(
    `\n${n(total.ignored)} ignored (message text, disabled equivalents, static mutants of an --ignoreStatic run), ${n(total.errors)} errors (the test process ended).`,
  );
}
