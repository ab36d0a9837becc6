import { execFileSync } from 'node:child_process';
import { describeRuntime } from '../support/runtime-server';

// Bun as the npm package of its Linux x64 binary (the machines this project runs on).
const BUN = require.resolve('@oven/bun-linux-x64/bin/bun');
const VERSION = execFileSync(BUN, ['--version'], { encoding: 'utf8' }).trim();

describeRuntime(`Bun ${VERSION}`, {
  entry: 'bun',
  build: 'node',
  format: 'esm',
  nodeGlobals: true,
  command: (bundle, port) => ({ file: BUN, args: ['run', bundle, String(port)], env: { DO_NOT_TRACK: '1' } }),
});
