import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from '../../../scripts/schema-codegen';

const root = join(__dirname, '..', '..', '..');

describe('types and embedded schemas derived from schemas/*.json', () => {
  it.each([...generate(root).entries()])('%s is what `npm run generate` writes', (path, expected) => {
    expect(readFileSync(join(root, path), 'utf8')).toBe(expected);
  });
});
