// `prepack` and `postpack`: the package.json that goes into the tarball has no `prepare` script.
//
// `prepare` builds dist/ where npm runs it, which is in a checkout (`npm ci`) and when the package is
// installed from git. Installed from a tarball or the registry, the package is built already, but
// npm still lists a `prepare` script of a tarball among the install scripts it warns of. So
// `node scripts/pack-manifest.mjs strip` (after the build, in `prepack`) takes it out of package.json,
// keeping the file as it was beside it, and `restore` (in `postpack`) puts that back; npm reads
// package.json again after `prepack`, so the tarball gets the stripped one.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const manifest = fileURLToPath(new URL('../package.json', import.meta.url));
const kept = `${manifest}.prepack`;

const command = process.argv[2];
if (command === 'strip') {
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  delete pkg.scripts.prepare;
  writeFileSync(kept, text);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (command === 'restore') {
  if (existsSync(kept)) renameSync(kept, manifest);
} else {
  process.stderr.write('usage: node scripts/pack-manifest.mjs strip|restore\n');
  process.exitCode = 2;
}
