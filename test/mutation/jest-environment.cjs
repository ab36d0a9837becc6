/**
 * The test environment of mutation runs: Node's, plus a record, made during Stryker's first (dry)
 * run, of which test files cover which mutant. The sequencer reads it to load only those files
 * for each mutant: loading a test file that has no test to run still costs its imports, and that
 * was most of a mutant's time.
 */
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

const RECORD = Symbol.for('svc-webhooks.mutation.coverage');
const record = (globalThis[RECORD] ??= { files: new Map(), everywhere: new Set() });

function fullName(test) {
  const names = [];
  for (let block = test.parent; block && block.parent; block = block.parent) names.unshift(block.name);
  return [...names, test.name].join(' ').trimStart();
}

class MutationEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.recordFile = join(config.projectConfig.rootDir, '.stryker-coverage-by-file.json');
  }

  /** The instrumenter's shared context; only the dry run (no active mutant) collects coverage. */
  coverage() {
    if (process.env.__STRYKER_ACTIVE_MUTANT__ !== undefined) return undefined;
    return this.global.__stryker__?.mutantCoverage;
  }

  async handleTestEvent(event) {
    if (event.name !== 'test_done') return;
    const perTest = this.coverage()?.perTest?.[fullName(event.test)];
    for (const id of Object.keys(perTest ?? {})) {
      if (!record.files.has(id)) record.files.set(id, new Set());
      record.files.get(id).add(this.testPath);
    }
  }

  async teardown() {
    const coverage = this.coverage();
    if (coverage !== undefined) {
      for (const id of Object.keys(coverage.static ?? {})) record.everywhere.add(id);
      const files = Object.fromEntries([...record.files].map(([id, paths]) => [id, [...paths]]));
      writeFileSync(this.recordFile, JSON.stringify({ files, everywhere: [...record.everywhere] }));
    }
    await super.teardown();
  }
}

module.exports = MutationEnvironment;
