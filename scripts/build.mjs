// `npm run build` (and `prepack`): builds dist/ from src/.
//
// - dist/index.js, dist/{testing,client,watch}/index.js, dist/cli/main.js: one CommonJS bundle per entry point
//   (esbuild), with a source map that points at the shipped src/ files.
// - dist/index.mjs, dist/{testing,client,watch}/index.mjs: their ESM faces over the same bundle, so that import and
//   require share one module instance (an error class is the same class from both).
// - Optional parts (LAZY_FILES: the Redis and PostgreSQL stores, the inbox, the setup client, the
//   schema validators) are bundles of their own, required the first time one of their exports is
//   used; the default setup never loads them. pino and raw-body are required on first use too.
// - Code two bundles share is in one place, dist/chunks/ (esbuild's code splitting), so that there
//   is one copy of every module in a process.
// - dist/web.mjs: the Fetch build, src/web.ts as one ES module without Node's modules, for the
//   conditions workerd, edge-light, worker and browser (options in scripts/web-bundle.cjs).
// - Declarations: one .d.ts per entry point (tsc, rolled up by rollup-plugin-dts), with what the
//   public API names and nothing else.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { writeDeclarations } from './build/declarations.mjs';
import { writeEsmFaces } from './build/esm-face.mjs';
import { bundleCommonJs, pointAtShippedSources } from './build/split-bundles.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { webBundleOptions } = createRequire(import.meta.url)('./web-bundle.cjs');

/** The published entry points: src path (without .ts) and whether it gets an ESM face. */
const ENTRIES = [
  { path: 'index', esm: true },
  { path: 'testing/index', esm: true },
  { path: 'client/index', esm: true },
  { path: 'watch/index', esm: true },
  { path: 'cli/main', esm: false },
];

/**
 * Source files whose code the default setup (one webhook, memory store, default logger) never
 * runs. Each is bundled apart (dist/<path>.js) and every import of it becomes a stand-in that
 * requires the bundle the first time one of its exports is read.
 */
const LAZY_FILES = [
  'generated/validators', // read when a webhook is set up, not when the package is loaded
  'dedup/redis-store',
  'dedup/postgres-store',
  'dedup/postgres-sql',
  'webhooks/delivery-done-sql',
  'inbox/inbox-producer',
  'inbox/redis-connection',
  'receive/inbox-worker',
  'client/svc-client',
  'client/webhook-url',
  'ordering/board-sequence-tracker',
  'webhooks/verify-delivery', // the standalone verifiers, apart from the middleware
  'observe/process-trace', // spans: only with an OpenTelemetry provider registered
  'observe/handler-spans',
  'watch/watch-webhooks', // the webhook watcher
];

/** Runtime dependencies required on first use (pino by the default logger, raw-body by the first Node request). */
const LAZY_PACKAGES = ['pino', 'raw-body'];

async function main() {
  const started = Date.now();
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  const stage = mkdtempSync(join(tmpdir(), 'svc-webhooks-build-'));
  try {
    const { exportsOf } = await bundleCommonJs({ root, stage, entries: ENTRIES.map((e) => e.path), lazyFiles: LAZY_FILES, lazyPackages: LAZY_PACKAGES });
    writeEsmFaces({ root, entries: ENTRIES.filter((e) => e.esm).map((e) => e.path), exportsOf, lazyFiles: LAZY_FILES });
    await esbuild.build({ ...webBundleOptions({ entry: 'src/web.ts', outfile: 'dist/web.mjs' }), sourcemap: true });
    pointAtShippedSources(join(root, 'dist', 'web.mjs.map'), join(root, 'src'));
    await writeDeclarations({ root, stage, entries: [...ENTRIES.filter((e) => e.esm).map((e) => e.path), 'web'] });
    writeFileSync(join(root, 'dist', 'web.d.mts'), "export * from './web.js';\n");
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  process.stderr.write(`built dist/ in ${Date.now() - started} ms\n`);
}

main().catch((err) => {
  process.stderr.write(`build failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
