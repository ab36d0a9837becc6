import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Every comment that turns a lint rule off says why, after ` -- `, on its own line. */
describe('lint exceptions', () => {
  const root = join(__dirname, '../..');
  const found = execFileSync(
    'git',
    [
      'grep',
      '-n',
      '-E',
      '^\\s*(//|/\\*) *(eslint|oxlint)-disable',
      '--',
      'src',
      'test',
      'bench',
      'scripts',
      'examples',
      'bin',
      ':!src/generated',
      ':!src/testing/generated',
    ],
    {
      cwd: root,
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('test/lint/'));

  it('exist, and are few', () => {
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThan(20);
  });

  it.each(found)('%s gives its reason', (line) => {
    expect(line).toMatch(/(eslint|oxlint)-disable(-next-line|-line)? [\w/@-]+(, [\w/@-]+)* -- \S.{10,}/);
  });
});
