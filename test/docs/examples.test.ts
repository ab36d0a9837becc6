import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { asUserWritesIt, codeBlocks, documentationFiles, read, root, type CodeBlock } from './markdown';

/** The comment on the line before a block. */
function marker(block: CodeBlock): string {
  return (read(block.file).split('\n')[block.line - 2] ?? '').trim();
}

/** The file a block says it runs as: `<!-- runs as test/docs/examples/x.test.ts -->` on the line before it. */
function runsAs(block: CodeBlock): string | undefined {
  return /^<!-- runs as (\S+) -->$/.exec(marker(block))?.[1];
}

/** A `node:test` file run with `tsx --test`: `<!-- runs with tsx --test as test/docs/node-test/x.ts -->`. */
function runsWithNodeTest(block: CodeBlock): string | undefined {
  return /^<!-- runs with tsx --test as (\S+) -->$/.exec(marker(block))?.[1];
}

const blocks = documentationFiles()
  .flatMap(codeBlocks)
  .filter((b) => b.lang === 'ts');
const nodeTests = blocks.filter((b) => runsWithNodeTest(b) !== undefined);
const tests = blocks.filter((b) => /^test\(/m.test(b.code) && !nodeTests.includes(b));

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

describe('the node:test examples of docs/ (no test runner to set up)', () => {
  it('are there to check', () => {
    expect(nodeTests.length).toBeGreaterThanOrEqual(1);
  });

  it.each(nodeTests.map((b) => [`${b.file}:${b.line}`, b] as const))('%s is, word for word, a file that passes under tsx --test', async (_where, block) => {
    const file = runsWithNodeTest(block)!;
    expect(block.code.trim()).toBe(asUserWritesIt(file));
    const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), '--test', file], { cwd: root });
    expect(stdout).toMatch(/^# pass [1-9]/m);
    expect(stdout).toMatch(/^# fail 0$/m);
  });
});
