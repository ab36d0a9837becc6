import { join } from 'node:path';
import ts from 'typescript';

/**
 * Every export of the public entry points carries TSDoc: it is what an editor shows on hover and
 * what `npm run docs` makes the API reference of.
 */
const ROOT = join(__dirname, '..', '..');
const ENTRIES = ['src/index.ts', 'src/testing/index.ts'].map((entry) => join(ROOT, entry));

function undocumented(): string[] {
  const program = ts.createProgram(ENTRIES, { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, strict: true, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const missing: string[] = [];
  for (const entry of ENTRIES) {
    const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declaration = symbol.declarations?.[0];
      const documented = symbol.getDocumentationComment(checker).length > 0 || (declaration !== undefined && ts.getJSDocTags(declaration).length > 0);
      if (!documented) missing.push(`${exported.name} (${declaration?.getSourceFile().fileName.slice(ROOT.length + 1) ?? 'unknown'})`);
    }
  }
  return missing.sort();
}

describe('the public API', () => {
  it('documents every export of its entry points', () => {
    expect(undocumented()).toEqual([]);
  });
});
