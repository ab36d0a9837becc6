/**
 * The test environment of mutation runs: Node's, plus
 * - a record, made during Stryker's first (dry) run, of which test files cover which mutant and how
 *   long each file takes. The sequencer reads it to load only those files for each mutant, cheapest
 *   first: loading a test file that has no test to run still costs its imports, and that was most
 *   of a mutant's time;
 * - a bail within a file: once a test fails under a mutant, the file's remaining tests are skipped
 *   (the mutant is killed; `jest-runner.cjs` skips the remaining files).
 */
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');
const { TestEnvironment } = require('jest-environment-node');

const RECORD = Symbol.for('svc-webhooks.mutation.coverage');
const record = (globalThis[RECORD] ??= { files: new Map(), everywhere: new Set(), cost: new Map() });

function fullName(test) {
  const names = [];
  for (let block = test.parent; block && block.parent; block = block.parent) names.unshift(block.name);
  return [...names, test.name].join(' ').trimStart();
}

const mutantActive = () => process.env.__STRYKER_ACTIVE_MUTANT__ !== undefined;

class MutationEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.started = performance.now();
    this.testPath = context.testPath;
    this.recordFile = join(config.projectConfig.rootDir, '.stryker-coverage-by-file.json');
    this.killed = false;
  }

  /** The instrumenter's shared context; only the dry run (no active mutant) collects coverage. */
  coverage() {
    if (mutantActive()) return undefined;
    return this.global.__stryker__?.mutantCoverage;
  }

  async handleTestEvent(event) {
    if (event.name === 'test_start' && this.killed) {
      // Read by jest-circus right after this event: the test is reported as skipped, not run.
      event.test.mode = 'skip';
      return;
    }
    if (event.name !== 'test_done') return;
    if (mutantActive() && event.test.errors.length > 0) this.killed = true;
    const perTest = this.coverage()?.perTest?.[fullName(event.test)];
    for (const id of Object.keys(perTest ?? {})) {
      if (!record.files.has(id)) record.files.set(id, new Set());
      record.files.get(id).add(this.testPath);
    }
  }

  async teardown() {
    const coverage = this.coverage();
    if (coverage !== undefined) {
      record.cost.set(this.testPath, Math.round(performance.now() - this.started));
      for (const id of Object.keys(coverage.static ?? {})) record.everywhere.add(id);
      const files = Object.fromEntries([...record.files].map(([id, paths]) => [id, [...paths]]));
      const cost = Object.fromEntries(record.cost);
      writeFileSync(this.recordFile, JSON.stringify({ files, everywhere: [...record.everywhere], cost }));
    }
    await super.teardown();
  }
}

module.exports = MutationEnvironment;
