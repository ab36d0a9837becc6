import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describeRuntime } from '../support/runtime-server';

// Deno as the npm package of its Linux x64 binary (the machines this project runs on).
const DENO = require.resolve('@deno/linux-x64-glibc/deno');
const VERSION = execFileSync(DENO, ['--version'], { encoding: 'utf8' }).split('\n')[0]!;

describeRuntime(VERSION, {
  entry: 'deno',
  build: 'node',
  format: 'esm',
  nodeGlobals: true,
  command: (bundle, port, dir) => ({
    file: DENO,
    // Loopback only; env and read for the Node build's dependencies (pino reads its environment).
    args: ['run', '--allow-net=127.0.0.1', '--allow-env', '--allow-read', '--allow-sys', bundle, String(port)],
    // Nothing is fetched: no update check, and Deno's cache stays in the test's own directory.
    env: { DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1', DENO_DIR: join(dir, 'deno-cache') },
  }),
});
