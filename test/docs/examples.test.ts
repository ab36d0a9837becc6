import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeBlocks, documentationFiles, read, root, type CodeBlock } from './markdown';

/** The file a block says it runs as: `<!-- runs as test/docs/examples/x.test.ts -->` on the line before it. */
function runsAs(block: CodeBlock): string | undefined {
  const before = read(block.file).split('\n')[block.line - 2] ?? '';
  return /^<!-- runs as (\S+) -->$/.exec(before.trim())?.[1];
}

/** A test file as a user would write it: the package's names instead of the paths to the sources. */
function asUserWritesIt(file: string): string {
  return readFileSync(join(root, file), 'utf8')
    .replace(/from '(?:\.\.\/)+src\/testing'/g, "from 'svc-webhooks/testing'")
    .replace(/from '(?:\.\.\/)+src'/g, "from 'svc-webhooks'")
    .trim();
}

const blocks = documentationFiles()
  .flatMap(codeBlocks)
  .filter((b) => b.lang === 'ts');
const tests = blocks.filter((b) => /^test\(/m.test(b.code));

describe('the test examples of README.md and docs/', () => {
  it('are there to check', () => {
    expect(tests.length).toBeGreaterThanOrEqual(5);
  });

  it.each(tests.map((b) => [`${b.file}:${b.line}`, b] as const))('%s runs: it is, word for word, a test file of the suite', (_where, block) => {
    const file = runsAs(block);
    expect(file).toMatch(/^test\/.+\.test\.ts$/);
    expect(existsSync(join(root, file!))).toBe(true);
    expect(block.code.trim()).toBe(asUserWritesIt(file!));
  });
});
