import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { optionsMarkdown } from '../../scripts/options-doc';

describe('docs/options.md', () => {
  it('is the page the option declarations make (npm run generate:options writes it)', () => {
    expect(readFileSync(join(__dirname, '../../docs/options.md'), 'utf8')).toBe(optionsMarkdown());
  });
});
