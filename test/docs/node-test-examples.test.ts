import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { asUserWritesIt, codeBlocks, documentationFiles, read, root, type CodeBlock } from './markdown';

/** The file a block says it runs as under node:test: `<!-- runs with node --test as test/docs/examples/x.node.ts -->`. */
function runsWithNodeTest(block: CodeBlock): string | undefined {
  const before = read(block.file).split('\n')[block.line - 2] ?? '';
  return /^<!-- runs with node --test as (\S+) -->$/.exec(before.trim())?.[1];
}

/** A block run under `tsx --test` instead (test/docs/examples.test.ts checks those). */
function runsWithTsx(block: CodeBlock): boolean {
  return /^<!-- runs with tsx --test as \S+ -->$/.test((read(block.file).split('\n')[block.line - 2] ?? '').trim());
}

const nodeTests = documentationFiles()
  .flatMap(codeBlocks)
  .filter((b) => b.lang === 'ts' && /from 'node:test'/.test(b.code) && !runsWithTsx(b))
  .map((b) => [`${b.file}:${b.line}`, b] as const);

describe('the node:test examples of docs/', () => {
  it('are there to check', () => {
    expect(nodeTests.length).toBeGreaterThanOrEqual(1);
  });

  it.each(nodeTests)(
    '%s is, word for word, a file that passes under node --test',
    async (_where, block) => {
      const file = runsWithNodeTest(block);
      expect(file).toMatch(/^test\/docs\/examples\/.+\.node\.ts$/);
      expect(existsSync(join(root, file!))).toBe(true);
      expect(block.code.trim()).toBe(asUserWritesIt(file!));
      const result = await new Promise<{ code: number; output: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', '--test', file!], { cwd: root, timeout: 60_000 }, (err, stdout, stderr) => {
          resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, output: `${stdout}${stderr}` });
        });
      });
      expect(result).toEqual({ code: 0, output: expect.stringMatching(/^# pass 1$/m) });
    },
    90_000,
  );
});
