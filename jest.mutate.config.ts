import type { Config } from 'jest';
import { join } from 'node:path';
import base from './jest.config';

/**
 * The tests a mutation run (`npm run mutate`) repeats for each mutant: the fast, in-process unit and
 * integration tests of the core. Tests that start a redis-server, a child process or Chromium stay in
 * the normal suite (`npm test`), as do those of generated code and fixtures (not mutated): they are
 * too slow to repeat hundreds of times, or test nothing a mutant changes.
 */
const config: Config = {
  ...base,
  // The options page is made from the option declarations: it is what a declaration's text is for.
  testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/docs/options-doc.test.ts'],
  testPathIgnorePatterns: [
    '/node_modules/',
    '/test/integration/(package-exports|example-server|fixtures|log-flush|ignore-own-changes)\\.test\\.ts$',
    '/test/unit/validate/(generated-validators|schema-sync)\\.test\\.ts$',
  ],
  // An absolute path: Stryker loads the environment itself, without Jest's <rootDir>.
  testEnvironment: join(__dirname, 'test/mutation/jest-environment.cjs'),
  testSequencer: '<rootDir>/test/mutation/jest-sequencer.cjs',
  runner: join(__dirname, 'test/mutation/jest-runner.cjs'),
};

export default config;
