/**
 * Jest's own test runner, with a bail for mutation runs: once a test file has a failing test, the
 * mutant is killed and the files after it are not run. Stryker's jest runner cannot turn on Jest's
 * `bail` (it ends the process), and without it a killed mutant still paid for every covering test.
 * Outside a mutant run (the dry run, plain jest) it runs every file as usual.
 */
const TestRunner = require('jest-runner').default;

const failed = (result) => result.numFailingTests > 0 || result.testExecError !== undefined;

class MutationRunner extends TestRunner {
  async runTests(tests, watcher, options) {
    if (!options.serial || process.env.__STRYKER_ACTIVE_MUTANT__ === undefined) {
      return super.runTests(tests, watcher, options);
    }
    let killed = false;
    const offSuccess = this.on('test-file-success', ([, result]) => {
      if (failed(result)) killed = true;
    });
    const offFailure = this.on('test-file-failure', () => {
      killed = true;
    });
    try {
      for (const test of tests) {
        if (killed) break;
        await super.runTests([test], watcher, options);
      }
    } finally {
      offSuccess();
      offFailure();
    }
  }
}

module.exports = MutationRunner;
