// The published declarations: tsc writes one .d.ts per source file into the staging directory, and
// rollup-plugin-dts rolls them up into one file per entry point (and a shared chunk), holding only
// what the public API names. A user's type-check (skipLibCheck off) then reads no internal module,
// such as the OpenTelemetry spans, whose types come from an optional peer the user may not have.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';

const require = createRequire(import.meta.url);

/** Writes dist/<entry>.d.ts for each entry (src paths without .ts). */
export async function writeDeclarations({ root, stage, entries }) {
  const types = join(stage, 'types');
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', types], { cwd: root, stdio: 'inherit' });
  const bundle = await rollup({
    input: Object.fromEntries(entries.map((entry) => [entry, join(types, `${entry}.d.ts`)])),
    plugins: [dts()],
    // Node's and the dependencies' types stay imports.
    external: (id) => !id.startsWith('.') && !id.startsWith('/'),
  });
  await bundle.write({ dir: join(root, 'dist'), format: 'es', entryFileNames: '[name].d.ts', chunkFileNames: 'types/shared-[hash].d.ts' });
  await bundle.close();
}
