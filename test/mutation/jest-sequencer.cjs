/**
 * Runs, for the mutant under test, only the test files that cover it (as recorded by the mutation
 * test environment during the dry run). Stryker already filters the tests by name; this spares
 * loading the files that would skip every test. A static mutant (hit while modules load), or one
 * the record does not know, gets every file.
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
    return { files: new Map(Object.entries(saved.files).map(([id, paths]) => [id, new Set(paths)])), everywhere: new Set(saved.everywhere) };
  } catch {
    return undefined;
  }
}

class MutationSequencer extends Sequencer {
  sort(tests) {
    const mutant = process.env.__STRYKER_ACTIVE_MUTANT__;
    if (mutant === undefined || tests.length === 0) return super.sort(tests);
    const record = coverage(tests[0].context.config.rootDir);
    const files = record?.files.get(mutant);
    if (record === undefined || record.everywhere.has(mutant) || files === undefined) return super.sort(tests);
    return super.sort(tests.filter((test) => files.has(test.path)));
  }
}

module.exports = MutationSequencer;
