#!/usr/bin/env node
'use strict';
// Launcher for `npx svc-webhooks`. A published package runs the compiled CLI in dist/. In a
// checkout without a build it runs the TypeScript source through tsx (a dev dependency), so the
// CLI works right after `npm ci`. SVC_WEBHOOKS_CLI_SOURCE=1 prefers the source even when a
// (possibly stale) build exists, which is what the tests use.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const built = join(root, 'dist', 'cli', 'main.js');
const source = join(root, 'src', 'cli', 'main.ts');
const preferSource = process.env.SVC_WEBHOOKS_CLI_SOURCE === '1' && existsSync(source);

if (!preferSource && existsSync(built)) {
  require(built).run();
} else if (existsSync(source)) {
  try {
    require('tsx/cjs');
  } catch {
    process.stderr.write('svc-webhooks: the CLI is not built and tsx is not installed; run `npm run build` (or `npm ci` for the dev dependencies)\n');
    process.exit(1);
  }
  require(source).run();
} else {
  process.stderr.write('svc-webhooks: cannot find the CLI (dist/cli/main.js); the package looks incomplete\n');
  process.exit(1);
}
