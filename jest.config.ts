import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Transpile only: `npm test` type-checks the whole project with tsc before jest starts.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  // Each test file that starts a server gets a fresh module registry; give them room on 2 cores.
  testTimeout: 20_000,
};

export default config;
