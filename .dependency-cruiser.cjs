/**
 * The import rule of ARCHITECTURE.md, checked by `npm test` (`npm run lint:imports`). The folders of
 * `src/` are layers, listed from the top (the public entry points) down to the shared pieces; a
 * module may import its own layer and the layers below it, never one above. The stages of the
 * pipeline (capture, verify, parse, validate, dedup, inbox, route, observe) are siblings: each may
 * import only itself and the shared layers, never another stage; `receive/` alone joins them. A
 * new import that breaks the rule fails with its name: `<layer>-imports-down` or
 * `<stage>-imports-no-other-stage`.
 */
const UPPER = [
  ['entry', '^src/(index[.]ts|web[.]ts|cli/)'],
  ['relay', '^src/relay/'],
  ['testing', '^src/testing/'],
  ['watch', '^src/watch/'],
  ['webhooks', '^src/webhooks/'],
  ['adapters', '^src/adapters/'],
  ['receive', '^src/receive/'],
];
const STAGES = [
  ['capture', '^src/capture/'],
  ['verify', '^src/verify/'],
  ['parse', '^src/parse/'],
  ['validate', '^src/validate/'],
  ['dedup', '^src/dedup/'],
  ['inbox', '^src/inbox/'],
  ['route', '^src/route/'],
  ['observe', '^src/observe/'],
];
const SHARED = [
  ['client', '^src/client/'],
  ['ordering', '^src/ordering/'],
  ['internal', '^src/internal/'],
  ['base', '^src/(errors[.]ts|generated/)'],
];
// internal/ is itself layered, from the top down: a delivery's shapes and records use the loggers,
// the loggers note the request, and everything may use the value and option checks at the bottom.
const INTERNAL = [
  ['delivery', '^src/internal/delivery/'],
  ['logging', '^src/internal/logging/'],
  ['request', '^src/internal/request/'],
  ['connections', '^src/internal/connections/'],
  ['runtime', '^src/internal/runtime/'],
  ['checks', '^src/internal/checks/'],
];
const LAYERS = [...UPPER, ...STAGES, ...SHARED];
const anyOf = (layers) => layers.map(([, p]) => `(${p})`).join('|');

function rule(name, comment, from, to) {
  return { name, comment, severity: 'error', from: { path: from }, to: { path: to } };
}

const upward = [
  ...UPPER.slice(1).map(([name, path], i) =>
    rule(
      `${name}-imports-down`,
      `src/${name} sits below ${UPPER.slice(0, i + 1)
        .map(([n]) => n)
        .join(', ')} (ARCHITECTURE.md): it may import only itself and the layers below it.`,
      path,
      anyOf(UPPER.slice(0, i + 1)),
    ),
  ),
  ...STAGES.map(([name, path]) =>
    rule(`${name}-imports-down`, `src/${name} is a stage of the pipeline, below ${UPPER.map(([n]) => n).join(', ')} (ARCHITECTURE.md).`, path, anyOf(UPPER)),
  ),
  ...STAGES.map(([name, path]) =>
    rule(
      `${name}-imports-no-other-stage`,
      `The stages are siblings (ARCHITECTURE.md): src/${name} may import only itself and the shared layers (${SHARED.map(([n]) => n).join(', ')}); receive/ alone joins the stages. Move what two stages share down to internal/.`,
      path,
      anyOf(STAGES.filter(([other]) => other !== name)),
    ),
  ),
  ...SHARED.map(([name, path], i) =>
    rule(
      `${name}-imports-down`,
      `src/${name} is shared by the layers above it (ARCHITECTURE.md): it may import only itself and the shared layers below it.`,
      path,
      anyOf([...UPPER, ...STAGES, ...SHARED.slice(0, i)]),
    ),
  ),
  ...INTERNAL.map(([name, path], i) =>
    rule(
      `internal-${name}-imports-down`,
      `internal/${name} sits below ${
        INTERNAL.slice(0, i)
          .map(([n]) => `internal/${n}`)
          .join(', ') || 'the rest of src/'
      } (ARCHITECTURE.md): it may import only itself and the internal/ folders below it.`,
      path,
      anyOf([...UPPER, ...STAGES, ...SHARED.slice(0, -2), ...INTERNAL.slice(0, i)]),
    ),
  ),
  {
    ...rule(
      'internal-files-in-folders',
      'internal/ holds folders that say what they hold (ARCHITECTURE.md): put the module in one of them.',
      '^src/internal/[^/]+$',
      '',
    ),
    to: {},
  },
];

module.exports = {
  forbidden: [
    ...upward,
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
