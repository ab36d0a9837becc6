/**
 * Reading Stryker's JSON reports: the results of a run merged with those of later runs over some of
 * its files or lines (each replacing the results of the mutants it tested), and the score they give.
 * Scores are killed and timed-out mutants over all with a result, no coverage counted as undetected;
 * ignored mutants and errors (the test process ended) are not counted.
 */
import { readFileSync } from 'node:fs';

export const DETECTED = new Set(['Killed', 'Timeout']);
export const UNDETECTED = new Set(['Survived', 'NoCoverage']);

// A mutant is the same mutant in two reports of the same source when its place, mutator and replacement are.
const key = (m) => `${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column} ${m.mutatorName} ${m.replacement}`;

/** The first report's files, each mutant's result replaced by a later report's where one tested it. */
export function mergedReports(first, ...later) {
  const [base, ...rest] = [first, ...later].map((r) => (typeof r === 'string' ? JSON.parse(readFileSync(r, 'utf8')) : r));
  for (const report of rest) {
    for (const [file, data] of Object.entries(report.files)) {
      const target = base.files[file];
      if (target === undefined || target.source !== data.source) continue;
      const tested = new Map(data.mutants.filter((m) => m.status !== 'Ignored').map((m) => [key(m), m]));
      target.mutants = target.mutants.map((m) => tested.get(key(m)) ?? m);
    }
  }
  return base;
}

/** Counts of one file's mutants, or of all of a report's when summed. */
export function counts(mutants) {
  const c = { result: 0, detected: 0, survived: 0, noCoverage: 0, ignored: 0, errors: 0 };
  for (const m of mutants) {
    if (m.status === 'Ignored') c.ignored++;
    else if (!DETECTED.has(m.status) && !UNDETECTED.has(m.status)) c.errors++;
    else {
      c.result++;
      if (DETECTED.has(m.status)) c.detected++;
      if (m.status === 'Survived') c.survived++;
      if (m.status === 'NoCoverage') c.noCoverage++;
    }
  }
  return c;
}

/** Counts of every mutant of a (merged) report. */
export const reportCounts = (report) => counts(Object.values(report.files).flatMap((data) => data.mutants));

export const score = (c) => (c.result === 0 ? 100 : (100 * c.detected) / c.result);
