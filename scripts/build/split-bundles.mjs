// The CommonJS bundles of dist/, made in two esbuild passes, because esbuild splits code into shared
// chunks only in ESM and Node 20 cannot require() ESM:
//
// 1. src/ -> ESM with code splitting, into a staging directory: one file per entry point and per lazy
//    file, and chunks for the code several of them share (so every module exists once).
// 2. Each staged file -> CommonJS in dist/, its imports of other staged files turned into require().
//
// An import of a lazy file (or a lazy package) is resolved to a stand-in module: a CommonJS object
// with a getter per export that requires the real bundle on first read. esbuild turns a named import
// from a CommonJS module into a property read at each use, so the bundle loads when the code that
// uses it first runs, not when the importing module loads.
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as esbuild from 'esbuild';

const LAZY = 'svc-lazy';
const CORE = 'svc-core';
// Where dist/index.js shows the chunks it holds to the other bundles (a symbol: no export name).
const CHUNKS = 'svc-webhooks.chunks';
// require() in pass 1 becomes this name, so esbuild leaves it alone in ESM and pass 2 gives the
// real `require` back: plain require() calls, which bundlers of users' apps can follow.
const REQUIRE = '__svcRequire';
const TARGET = 'node20';
// Marks the plugin's own resolve call, which must not come back to the plugin.
const SKIP = Symbol('skip');

const posix = (path) => path.split(sep).join('/');

/** The stand-in of a lazy file or package: getters that require it on first read. */
function standIn(specifier, names, withDefault) {
  const lines = [
    `// Required the first time one of its exports is read: ${specifier}`,
    'var loaded;',
    `function load() { return loaded === undefined ? (loaded = require(${JSON.stringify(specifier)})) : loaded; }`,
    'Object.defineProperty(exports, "__esModule", { value: true });',
  ];
  if (withDefault) lines.push('Object.defineProperty(exports, "default", { enumerable: true, get: load });');
  for (const name of names) {
    if (name === 'default') continue;
    lines.push(`Object.defineProperty(exports, ${JSON.stringify(name)}, { enumerable: true, get: function () { return load()[${JSON.stringify(name)}]; } });`);
  }
  return `${lines.join('\n')}\n`;
}

/** Pass 1's plugin: an import of a lazy file stays an import, of `svc-lazy:<file>`, for pass 2. */
function markLazyImports({ root, lazyFiles }) {
  const lazyPaths = new Map(lazyFiles.map((f) => [join(root, 'src', `${f}.ts`), f]));
  return {
    name: 'mark-lazy-imports',
    setup(build) {
      build.onResolve({ filter: /^[.]/ }, async (args) => {
        if (args.kind === 'entry-point' || args.pluginData === SKIP) return undefined;
        const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: SKIP });
        const file = lazyPaths.get(resolved.path);
        return file === undefined ? undefined : { path: `${LAZY}:${file}`, external: true };
      });
    },
  };
}

function stagedFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return stagedFiles(path);
    return name.endsWith('.js') ? [path] : [];
  });
}

/**
 * The chunks the core entry (dist/index.js) loads: pass 2 bundles them into it, so that the
 * package loads as one file, and every other bundle reaches their code there (coreEntrySource()).
 */
function coreChunks({ root, stage, metafile, coreEntry }) {
  const outputs = metafile.outputs;
  const staged = (path) => resolve(root, path);
  const entryOut = Object.keys(outputs).find((out) => outputs[out].entryPoint === `src/${coreEntry}.ts`);
  const core = new Set();
  const visit = (out) => {
    for (const imported of outputs[out].imports) {
      if (imported.external || core.has(staged(imported.path))) continue;
      core.add(staged(imported.path));
      visit(imported.path);
    }
  };
  visit(entryOut);
  return { entry: staged(entryOut), chunks: core, key: (chunk) => posix(relative(stage, chunk)) };
}

/** The core entry: the staged dist/index.js with its chunks, which it shows other bundles under CHUNKS. */
function coreEntrySource({ core, stage }) {
  const chunks = [...core.chunks];
  return [
    `export * from ${JSON.stringify(`./${posix(relative(stage, core.entry))}`)};`,
    ...chunks.map((chunk, i) => `import * as chunk${i} from ${JSON.stringify(`./${core.key(chunk)}`)};`),
    `Object.defineProperty(module.exports, Symbol.for(${JSON.stringify(CHUNKS)}), { value: Object.freeze({ ${chunks.map((chunk, i) => `${JSON.stringify(core.key(chunk))}: chunk${i}`).join(', ')} }) });`,
  ].join('\n');
}

/**
 * Pass 2's plugin: the staged file is the only input (with the core's chunks, for the core entry).
 * A lazy file or package resolves to its stand-in, a chunk of the core to the core's copy;
 * everything else it imports stays a require().
 */
function pass2Imports({ dist, stage, outfile, isCore, core, lazyPackages, names }) {
  const require = createRequire(import.meta.url);
  const toDist = (target) => {
    const path = posix(relative(dirname(outfile), target));
    return path.startsWith('.') ? path : `./${path}`;
  };
  return {
    name: 'pass-2-imports',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return args.path === CORE ? { path: CORE, namespace: CORE } : undefined;
        if (args.namespace === LAZY) return { path: args.path, external: true };
        if (lazyPackages.includes(args.path)) return { path: args.path, namespace: LAZY };
        if (args.path.startsWith(`${LAZY}:`)) return { path: args.path.slice(LAZY.length + 1), namespace: LAZY };
        if (args.path.startsWith('.')) {
          const target = resolve(args.resolveDir, args.path);
          if (isCore && (target === core.entry || core.chunks.has(target))) return { path: target };
          if (core.chunks.has(target)) return { path: core.key(target), namespace: CORE };
        }
        return { path: args.path, external: true };
      });
      build.onLoad({ filter: /.*/, namespace: CORE }, (args) => {
        if (args.path === CORE) return { contents: coreEntrySource({ core, stage }), loader: 'js', resolveDir: stage };
        const index = toDist(join(dist, relative(stage, core.entry)));
        return {
          contents: `module.exports = require(${JSON.stringify(index)})[Symbol.for(${JSON.stringify(CHUNKS)})][${JSON.stringify(args.path)}];\n`,
          loader: 'js',
        };
      });
      build.onLoad({ filter: /.*/, namespace: LAZY }, (args) => {
        if (lazyPackages.includes(args.path)) return { contents: standIn(args.path, Object.keys(require(args.path)), true), loader: 'js' };
        return { contents: standIn(toDist(join(dist, `${args.path}.js`)), names.get(args.path), false), loader: 'js' };
      });
    },
  };
}

/**
 * A bundle's source map points at the shipped src/ files without copying their text, and keeps the
 * text of everything else in it (modules the build made up, dependencies bundled into it).
 */
export function pointAtShippedSources(mapFile, src) {
  const map = JSON.parse(readFileSync(mapFile, 'utf8'));
  map.sourcesContent = map.sources.map((source, i) => {
    const path = resolve(dirname(mapFile), source);
    return path.startsWith(`${src}${sep}`) && existsSync(path) ? null : map.sourcesContent[i];
  });
  writeFileSync(mapFile, JSON.stringify(map));
}

/**
 * Builds the CommonJS bundles of `entries` (src paths without .ts; the first is the core) into
 * dist/, with `lazyFiles` and `lazyPackages` loaded on first use. Returns the export names of every
 * entry point and lazy file (src paths without .ts).
 */
export async function bundleCommonJs({ root, stage, entries, lazyFiles, lazyPackages }) {
  const dist = join(root, 'dist');
  const pass1 = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [...entries, ...lazyFiles].map((f) => `src/${f}.ts`),
    outdir: stage,
    outbase: 'src',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: TARGET,
    packages: 'external',
    define: { require: REQUIRE },
    sourcemap: 'linked',
    metafile: true,
    plugins: [markLazyImports({ root, lazyFiles })],
    // cli/main.ts asks `require.main === module`; in CommonJS (pass 2) `module` is the real one.
    logOverride: { 'commonjs-variable-in-esm': 'silent' },
    logLevel: 'warning',
  });
  const exportsOf = new Map();
  for (const info of Object.values(pass1.metafile.outputs)) {
    if (info.entryPoint !== undefined) exportsOf.set(info.entryPoint.replace(/^src\//, '').replace(/\.ts$/, ''), info.exports);
  }
  const core = coreChunks({ root, stage, metafile: pass1.metafile, coreEntry: entries[0] });
  for (const file of stagedFiles(stage)) {
    if (core.chunks.has(file)) continue;
    const isCore = file === core.entry;
    const outfile = join(dist, relative(stage, file));
    mkdirSync(dirname(outfile), { recursive: true });
    await esbuild.build({
      // The stage as working directory: the bundle's comments name staged files by their place in dist/.
      absWorkingDir: stage,
      entryPoints: [isCore ? CORE : file],
      outfile,
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: TARGET,
      define: { [REQUIRE]: 'require' },
      sourcemap: 'linked',
      sourcesContent: true,
      plugins: [pass2Imports({ dist, stage, outfile, isCore, core, lazyPackages, names: exportsOf })],
      logOverride: { 'commonjs-variable-in-esm': 'silent' },
      logLevel: 'warning',
    });
    pointAtShippedSources(`${outfile}.map`, join(root, 'src'));
  }
  return { exportsOf };
}
