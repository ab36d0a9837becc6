import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VALIDATORS_PATH, validatorsModule } from '../../../scripts/validator-codegen';

const root = join(__dirname, '..', '..', '..');

describe('src/generated/validators.ts', () => {
  it('is in sync with schemas/ (after changing a schema, run `npm run generate`)', () => {
    expect(readFileSync(join(root, VALIDATORS_PATH), 'utf8')).toBe(validatorsModule(root));
  });
});
