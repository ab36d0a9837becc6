import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { VALIDATORS_PATH, validatorsModule } from './validator-codegen';

/** Writes src/generated/validators.ts from schemas/ (also run by `npm run generate`). */
export function writeValidators(root: string): void {
  writeFileSync(join(root, VALIDATORS_PATH), validatorsModule(root));
  process.stdout.write(`wrote ${VALIDATORS_PATH}\n`);
}

if (require.main === module) writeValidators(resolve(__dirname, '..'));
