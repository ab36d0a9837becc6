/**
 * Runs, for the mutant under test, only the test files that cover it (as recorded by the mutation
 * test environment during the dry run), cheapest first. Stryker already filters the tests by name;
 * this spares loading the files that would skip every test, and with the runner's bail a mutant
 * killed by a fast unit test never loads the slow integration files. A static mutant (hit while
 * modules load), or one the record does not know, gets every file, also cheapest first.
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const RECORD = Symbol.for('svc-webhooks.mutation.coverage');

function coverage(rootDir) {
  const inMemory = globalThis[RECORD];
  if (inMemory !== undefined && inMemory.files.size > 0) return inMemory;
  try {
    // A test runner restarted after a timeout has no record in memory: read the one written to disk.
    const saved = JSON.parse(readFileSync(join(rootDir, '.stryker-coverage-by-file.json'), 'utf8'));
    return {
      files: new Map(Object.entries(saved.files).map(([id, paths]) => [id, new Set(paths)])),
      everywhere: new Set(saved.everywhere),
      cost: new Map(Object.entries(saved.cost ?? {})),
    };
  } catch {
    return undefined;
  }
}

class MutationSequencer extends Sequencer {
  sort(tests) {
    const mutant = process.env.__STRYKER_ACTIVE_MUTANT__;
    if (mutant === undefined || tests.length === 0) return super.sort(tests);
    const record = coverage(tests[0].context.config.rootDir);
    if (record === undefined) return super.sort(tests);
    const files = record.everywhere.has(mutant) ? undefined : record.files.get(mutant);
    const cost = (test) => record.cost.get(test.path) ?? Number.MAX_SAFE_INTEGER;
    return tests.filter((test) => files === undefined || files.has(test.path)).sort((a, b) => cost(a) - cost(b));
  }
}

module.exports = MutationSequencer;
