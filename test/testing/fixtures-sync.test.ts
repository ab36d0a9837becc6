import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FIXTURES_MODULE, fixturesModule } from '../../scripts/generate-fixtures';

const root = resolve(__dirname, '..', '..');

describe('embedded fixtures', () => {
  it('match examples/fixtures (run `npx tsx scripts/generate-fixtures.ts` after changing a fixture)', () => {
    expect(readFileSync(join(root, FIXTURES_MODULE), 'utf8')).toBe(fixturesModule(root));
  });
});
