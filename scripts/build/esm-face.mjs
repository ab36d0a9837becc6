// The ESM face of each CommonJS entry bundle: dist/<entry>.mjs re-exports what dist/<entry>.js
// exports, so that `import` and `require` share one module instance, and dist/<entry>.d.mts gives
// it the same types.
//
// It imports the bundle through dist/<entry>.require.cjs, which hands on the bundle's exports in a
// form Node's ESM loader finds no names in. Imported directly, the bundle would be scanned for its
// export names (cjs-module-lexer, in JavaScript on Node 20: milliseconds for a bundle this size)
// and every export read once, loading every optional part.
//
// ESM binds every named export when the module is linked, which would read (and so load) every
// optional part. An export that comes from a lazy file is therefore exported as a stand-in: a Proxy
// of a function that reaches the real export on first use. Calling it, `new`, `instanceof`,
// `extends` and its static members act on the real function or class; only its identity differs
// (`x.constructor === RedisStore` is false where RedisStore is the stand-in).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';

const ON_FIRST_USE = `
/** A stand-in for \`cjs[name]\`, a function or class whose code is required on first use. */
function onFirstUse(name) {
  const real = () => cjs[name];
  const standIn = new Proxy(function () {}, {
    apply: (_, self, args) => Reflect.apply(real(), self, args),
    construct: (_, args, newTarget) => Reflect.construct(real(), args, newTarget === standIn ? real() : newTarget),
    get: (_, key) => Reflect.get(real(), key),
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => Reflect.has(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
  return standIn;
}
`;

/**
 * The names `src/<entry>.ts` re-exports from lazy files (values only: types have no runtime form),
 * following its `export *` of other entries (src/index.ts re-exports src/web.ts).
 */
function lazyReExports({ root, entry, lazyFiles }) {
  const names = new Set();
  const visit = (from) => {
    const file = join(root, 'src', `${from}.ts`);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
    for (const statement of source.statements) {
      if (!ts.isExportDeclaration(statement) || statement.moduleSpecifier === undefined || statement.isTypeOnly) continue;
      const target = relative(join(root, 'src'), join(dirname(file), statement.moduleSpecifier.text))
        .split(sep)
        .join('/');
      const lazy = lazyFiles.includes(target) || lazyFiles.includes(`${target}/index`);
      if (statement.exportClause === undefined) {
        if (lazy) throw new Error(`src/${from}.ts: \`export *\` from the lazy file ${target}: name its exports, so that they can be stand-ins`);
        visit(target);
        continue;
      }
      if (!lazy || !ts.isNamedExports(statement.exportClause)) continue;
      for (const element of statement.exportClause.elements) if (!element.isTypeOnly) names.add(element.name.text);
    }
  };
  visit(entry);
  return names;
}

/** Writes dist/<entry>.mjs and dist/<entry>.d.mts for each entry. */
export function writeEsmFaces({ root, entries, exportsOf, lazyFiles }) {
  for (const entry of entries) {
    const base = entry.split('/').pop();
    const names = exportsOf.get(entry).filter((n) => n !== 'default');
    const lazy = lazyReExports({ root, entry, lazyFiles });
    const eager = names.filter((n) => !lazy.has(n));
    const standIns = names.filter((n) => lazy.has(n));
    const bundle = createRequire(import.meta.url)(join(root, 'dist', `${entry}.js`));
    for (const name of standIns) {
      if (typeof bundle[name] !== 'function')
        throw new Error(
          `src/${entry}.ts exports ${name}, a ${typeof bundle[name]}, from a lazy file: only functions and classes can stand in; export it from a module the package loads`,
        );
    }
    const lines = [
      `// The ESM face of ./${base}.js (one module instance for import and require); made by scripts/build.mjs.`,
      `import cjs from './${base}.require.cjs';`,
      `export const { ${eager.join(', ')} } = cjs;`,
    ];
    if (standIns.length > 0) {
      lines.push('// Optional parts, required on first use:');
      for (const name of standIns) lines.push(`export const ${name} = onFirstUse(${JSON.stringify(name)});`);
      lines.push(ON_FIRST_USE.trimEnd());
    }
    writeFileSync(join(root, 'dist', `${entry}.mjs`), `${lines.join('\n')}\n`);
    writeFileSync(
      join(root, 'dist', `${entry}.require.cjs`),
      `'use strict';\n// ./${base}.js for ./${base}.mjs, through a variable: Node's ESM loader finds no export names to read here.\nconst api = require('./${base}.js');\nmodule.exports = api;\n`,
    );
    writeFileSync(join(root, 'dist', `${entry}.d.mts`), `export * from './${base}.js';\n`);
  }
}
