// Builds the published entry points: CommonJS + declarations by tsc, and for each entry a thin ESM
// wrapper over the CommonJS build, so ESM and CommonJS users share one module instance; then the
// Fetch build (dist/web.mjs, one ES module without Node's modules) that the package's `workerd`,
// `edge-light`, `worker` and `browser` export conditions select.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { build } = require('esbuild');
const { webBundleOptions } = require('./web-bundle.cjs');
const ENTRIES = ['index', 'testing/index'];

rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
for (const entry of ENTRIES) {
  const base = entry.split('/').pop();
  const names = Object.keys(require(`../dist/${entry}.js`)).filter((n) => n !== 'default' && n !== '__esModule');
  writeFileSync(
    `dist/${entry}.mjs`,
    `import cjs from './${base}.js';\nexport const { ${names.join(', ')} } = cjs;\n`,
  );
  writeFileSync(`dist/${entry}.d.mts`, `export * from './${base}.js';\n`);
}
await build({ ...webBundleOptions({ entry: 'src/web.ts', outfile: 'dist/web.mjs' }), sourcemap: true });
writeFileSync('dist/web.d.mts', "export * from './web.js';\n");
