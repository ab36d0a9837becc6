import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * The shape the code keeps (ARCHITECTURE.md): small modules, and functions whose parameters a
 * reader can hold in mind. Generated code (`src/generated/`, `src/testing/generated/`) is exempt.
 */
const ROOT = join(__dirname, '..', '..');
const MAX_LINES = 300;
const MAX_PARAMETERS = 4;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(join(ROOT, 'src')).map((path) => ({ name: relative(ROOT, path), text: readFileSync(path, 'utf8') }));

/** Every function, method and constructor whose parameters are more than the bound, or a positional tuple. */
function overlong(name: string, text: string): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && !ts.isFunctionTypeNode(node) && !ts.isConstructorTypeNode(node)) {
      const params = node.parameters.filter((p) => !(ts.isIdentifier(p.name) && p.name.text === 'this'));
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      const where = `${name}:${line + 1}`;
      if (params.length > MAX_PARAMETERS) found.push(`${where} takes ${params.length} parameters`);
      // A rest parameter typed as a tuple is a variadic call (`command(...args)`), not one tuple argument.
      for (const p of params)
        if (p.dotDotDotToken === undefined && p.type !== undefined && ts.isTupleTypeNode(p.type)) found.push(`${where} takes a positional tuple`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the shape of src/', () => {
  it(`has no hand-written file over ${MAX_LINES} lines`, () => {
    const long = files.map(({ name, text }) => [name, text.split('\n').length] as const).filter(([, lines]) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it(`has no function with more than ${MAX_PARAMETERS} parameters or a positional tuple`, () => {
    expect(files.flatMap(({ name, text }) => overlong(name, text))).toEqual([]);
  });

  it('finds what it looks for (the checks are not vacuous)', () => {
    expect(
      overlong('x.ts', 'function f(a, b, c, d, e) {}\nconst g = (t: [string, number]) => t;\nclass C { m(a, b) {} }\nfunction v(...args: [string, number]) {}'),
    ).toEqual(['x.ts:1 takes 5 parameters', 'x.ts:2 takes a positional tuple']);
  });
});
