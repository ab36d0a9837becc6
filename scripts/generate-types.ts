import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeValidators } from './generate-validators';
import { generate } from './schema-codegen';

const root = resolve(__dirname, '..');
for (const [path, text] of generate(root)) {
  writeFileSync(join(root, path), text);
  process.stdout.write(`wrote ${path}\n`);
}
writeValidators(root);
