/**
 * The import rule of ARCHITECTURE.md, checked by `npm test` (`npm run lint:imports`): the folders of
 * `src/` are layers, listed here from the top (the public entry points) down to the shared pieces,
 * and a module may import its own layer and the layers below it, never one above. A new upward
 * import fails with the name of the rule it breaks, `<layer>-imports-down`.
 */
const LAYERS = [
  ['entry', '^src/(index[.]ts|web[.]ts|cli/)'],
  ['testing', '^src/testing/'],
  ['watch', '^src/watch/'],
  ['webhooks', '^src/webhooks/'],
  ['adapters', '^src/adapters/'],
  ['receive', '^src/receive/'],
  ['capture', '^src/capture/'],
  ['verify', '^src/verify/'],
  ['parse', '^src/parse/'],
  ['validate', '^src/validate/'],
  ['dedup', '^src/dedup/'],
  ['inbox', '^src/inbox/'],
  ['route', '^src/route/'],
  ['observe', '^src/observe/'],
  ['client', '^src/client/'],
  ['ordering', '^src/ordering/'],
  ['internal', '^src/internal/'],
  ['base', '^src/(errors[.]ts|generated/)'],
];

const downward = LAYERS.slice(1).map(([name, path], i) => {
  const above = LAYERS.slice(0, i + 1);
  return {
    name: `${name}-imports-down`,
    comment: `src/${name} sits below ${above.map(([n]) => n).join(', ')} in the pipeline (ARCHITECTURE.md): it may import only itself and the layers below it.`,
    severity: 'error',
    from: { path },
    to: { path: above.map(([, p]) => `(${p})`).join('|') },
  };
});

module.exports = {
  forbidden: [
    ...downward,
    {
      name: 'no-circular',
      comment: 'A cycle between modules: move the shared piece down to a layer both may import.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'src-not-to-outside',
      comment: 'Library code imports only src/ and its dependencies, never tests, examples or scripts.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|examples|scripts|bench)/' },
    },
    {
      name: 'every-folder-is-a-layer',
      comment: 'A module in a folder no layer names: add the folder to LAYERS (and to ARCHITECTURE.md) where it belongs.',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map(([, p]) => `(${p})`).join('|') },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type import upward ties the layers together as surely as a value import.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^src/generated/validators[.]ts$' },
  },
};
