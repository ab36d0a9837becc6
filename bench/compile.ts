/**
 * Compiles src/ and bench/ to CommonJS under .bench/js, file by file, as tsc would (the project
 * uses isolatedModules, so per-file transpiling gives the same output). The children then run plain
 * `node` on JavaScript, as a user's server does: tsx's loader would add its own startup time, CPU
 * and memory to every figure.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { JS_DIR, ROOT } from './paths';

const OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  sourceMap: false,
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Returns the number of files written. */
export function compileForChildren(): number {
  rmSync(JS_DIR, { recursive: true, force: true });
  const files = [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'bench'))];
  for (const file of files) {
    const { outputText, diagnostics } = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions: OPTIONS, fileName: file, reportDiagnostics: true });
    if (diagnostics !== undefined && diagnostics.length > 0) {
      throw new Error(`bench: cannot compile ${file}: ${ts.flattenDiagnosticMessageText(diagnostics[0]!.messageText, '\n')}`);
    }
    const out = join(JS_DIR, relative(ROOT, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, outputText);
  }
  return files.length;
}
