import { codeBlocks, documentationFiles } from './markdown';
import { compileSnippets } from './compile-snippets';

const blocks = documentationFiles().flatMap(codeBlocks);
const typescript = blocks.filter((b) => b.lang === 'ts' || b.lang === 'typescript');

describe('the code blocks of README.md and docs/', () => {
  it('are TypeScript that type-checks against the library (each block a module, strict)', () => {
    expect(typescript.length).toBeGreaterThan(40);
    expect(compileSnippets(typescript)).toEqual([]);
  }, 120_000);

  it("README.md's blocks declare every name they use, so each works as copied (no prelude)", () => {
    expect(
      compileSnippets(
        typescript.filter((b) => b.file === 'README.md'),
        { prelude: false },
      ),
    ).toEqual([]);
  });

  it('say their language, so that each is checked or shown as what it is', () => {
    const unlabelled = blocks.filter((b) => b.lang === '').map((b) => `${b.file}:${b.line}`);
    expect(unlabelled).toEqual([]);
  });

  it('leave no JavaScript unchecked: examples are written in TypeScript', () => {
    const javascript = blocks.filter((b) => ['js', 'javascript', 'mjs', 'cjs'].includes(b.lang)).map((b) => `${b.file}:${b.line}`);
    expect(javascript).toEqual([]);
  });
});

describe('the snippet check itself', () => {
  it('reports a block that does not compile, at its line in the page', () => {
    const broken = {
      file: 'docs/example.md',
      line: 10,
      lang: 'ts',
      code: "import { svcBoardWebhook } from 'svc-webhooks';\nsvcBoardWebhook('s'.repeat(16)).on('task.bogus', () => {});",
    };
    const problems = compileSnippets([broken]);
    expect(problems.map((p) => p.where)).toEqual(['docs/example.md:12']);
  }, 120_000);
});
