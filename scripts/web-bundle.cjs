// The Fetch build: src/web.ts bundled as one ES module for runtimes without Node's modules
// (workerd without nodejs_compat, Vercel's Edge runtime, service workers). The package's export
// conditions hand it to their bundlers. Used by scripts/build.mjs for dist/web.mjs and by the
// runtime tests (test/runtimes/), so that what they run is what is published. CommonJS, so that
// the tests (under Jest) and the build script both load it.
'use strict';
const { builtinModules } = require('node:module');
const { join, resolve } = require('node:path');

const root = resolve(__dirname, '..');

/** What bundlers for those runtimes ask for: Wrangler, Vercel and Next.js edge routes. */
const WEB_CONDITIONS = ['workerd', 'edge-light', 'worker', 'browser'];

// Optional peers of Node-only features (the inbox, the Redis and PostgreSQL stores): never loaded
// on the Fetch path, and left for the runtime's require(), which throws if an inbox is configured.
const NODE_ONLY_PEERS = ['bullmq', 'ioredis', 'pg'];

const NODE_BUILTINS = new Set(builtinModules);

/**
 * Fails the build on any import of a Node module (`node:*`, or a bare name like `crypto`): the
 * Fetch build must run where there are none.
 */
const noNodeModules = {
  name: 'no-node-modules',
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      const bare = args.path.startsWith('node:') ? args.path.slice(5) : args.path;
      if (!args.path.startsWith('node:') && !NODE_BUILTINS.has(bare.split('/')[0])) return undefined;
      return { errors: [{ text: `a Node module in the Fetch build: "${args.path}" imported by ${args.importer.replace(`${root}/`, '')}` }] };
    });
  },
};

/** raw-body reads Node requests only; the Fetch build has a reader that says so in its place. */
const noNodeBodyReader = {
  name: 'no-node-body-reader',
  setup(build) {
    build.onResolve({ filter: /\/read-raw-body$/ }, (args) => ({ path: `${join(args.resolveDir, args.path)}-absent.ts` }));
  },
};

/**
 * esbuild options for a Fetch bundle of `entry` (src/web.ts, or a test's worker that imports it).
 * `format`: 'esm' (workerd, bundlers) or 'iife' (a classic script, as the Edge runtime evaluates).
 */
function webBundleOptions({ entry, outfile, format = 'esm' }) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    format,
    platform: 'browser',
    conditions: WEB_CONDITIONS,
    target: 'es2022',
    external: NODE_ONLY_PEERS,
    plugins: [noNodeBodyReader, noNodeModules],
    logLevel: 'silent',
    absWorkingDir: root,
  };
}

module.exports = { WEB_CONDITIONS, webBundleOptions };
