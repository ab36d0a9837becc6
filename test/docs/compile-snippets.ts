/**
 * Type-checks the TypeScript code blocks of the documentation as a user's project would: each block
 * a module of its own, `svc-webhooks` and `svc-webhooks/testing` resolved to the sources, strict
 * mode, the globals of the snippet prelude for what a fragment leaves out. One program for all
 * blocks, so the library's types are checked once.
 */
import { join } from 'node:path';
import ts from 'typescript';
import type { CodeBlock } from './markdown';
import { root } from './markdown';
import { SNIPPET_AMBIENT_MODULES, SNIPPET_PRELUDE } from './snippet-prelude';

export interface SnippetProblem {
  /** `file:line` in the documentation. */
  readonly where: string;
  readonly message: string;
}

const VIRTUAL_DIR = join(root, 'test', 'docs', '.snippets');

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2022.d.ts'],
  types: ['node', 'jest'],
  strict: true,
  noUncheckedIndexedAccess: true,
  esModuleInterop: true,
  skipLibCheck: true,
  resolveJsonModule: true,
  noEmit: true,
  baseUrl: root,
  paths: {
    'svc-webhooks': ['src/index.ts'],
    'svc-webhooks/testing': ['src/testing/index.ts'],
    'svc-webhooks/client': ['src/client/index.ts'],
    'svc-webhooks/watch': ['src/watch/index.ts'],
  },
};

/**
 * A block whose first line names its file (`// webhook.ts: …`) is that file, beside the other named
 * files of its page, so that `import { board } from './webhook'` in the next block resolves.
 */
function virtualName(block: CodeBlock): string {
  const page = join(VIRTUAL_DIR, block.file.replace(/[^\w.-]/g, '_'));
  const named = /^\/\/ ((?:[\w-]+\/)*[\w-]+\.ts)\b/.exec(block.code)?.[1];
  return named === undefined ? `${page}-L${block.line}.ts` : join(page, named);
}

/** Every diagnostic of the blocks, placed at the documentation line it comes from. */
export function compileSnippets(blocks: readonly CodeBlock[], options: { prelude?: boolean } = {}): SnippetProblem[] {
  const virtual = new Map<string, { text: string; block?: CodeBlock }>();
  // Without the prelude a block must declare every name it uses, as a reader copying it must.
  if (options.prelude !== false) virtual.set(join(VIRTUAL_DIR, 'prelude.ts'), { text: SNIPPET_PRELUDE });
  virtual.set(join(VIRTUAL_DIR, 'ambient-modules.d.ts'), { text: SNIPPET_AMBIENT_MODULES });
  // `export {}` makes every block a module, so its declarations shadow the prelude's globals.
  for (const block of blocks) virtual.set(virtualName(block), { text: `${block.code}\nexport {};\n`, block });

  const host = ts.createCompilerHost(OPTIONS);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, create) => {
    const file = virtual.get(name);
    return file ? ts.createSourceFile(name, file.text, language, true) : getSourceFile(name, language, onError, create);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => virtual.has(name) || fileExists(name);
  const directoryExists = host.directoryExists?.bind(host);
  host.directoryExists = (name) => name.startsWith(VIRTUAL_DIR) || directoryExists?.(name) !== false;
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => virtual.get(name)?.text ?? readFile(name);

  const program = ts.createProgram([...virtual.keys()], OPTIONS, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    const file = d.file && virtual.get(d.file.fileName);
    if (!d.file || !file) return { where: d.file?.fileName ?? '(options)', message };
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    const where = file.block ? `${file.block.file}:${file.block.line + 1 + line}` : `${d.file.fileName}:${line + 1}`;
    return { where, message };
  });
}
