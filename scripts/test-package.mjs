// `npm run test:package`: packs the library as `npm publish` would and lints the tarball (publint,
// are-the-types-wrong); installs it into throw-away consumer projects (ESM, CommonJS, plain
// `require`, TypeScript under each module resolution), and in each type-checks and runs a two-line
// receiver that answers a signed delivery. Installing it must run no script of the package; the
// default setup must load only its own bundle and every runtime dependency, and an optional part
// only when used (scripts/package/default-setup.mjs). Then it installs the library from its git
// repository, which must build dist/ on the way.
// Installs resolve from the local npm cache first (`--prefer-offline`), so a warm machine needs no
// network. Exits non-zero, with the failing step's output, when any consumer fails.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check as checkDefaultSetup, defaultSetupScript } from './package/default-setup.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const versionOf = (name) => JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
// The TypeScript consumers check the library's declarations too (skipLibCheck off): they install the
// types those reference, Node's and supertest's (for the deliver helpers of svc-webhooks/testing).
const TYPES = { '@types/node': versionOf('@types/node'), '@types/supertest': versionOf('@types/supertest') };
const INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
// Scripts npm would run when a user installs the package (npm warns of them, or runs them).
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

function run(cmd, args, cwd) {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
  } catch (err) {
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
}

function write(dir, files) {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), typeof text === 'string' ? text : `${JSON.stringify(text, null, 2)}\n`);
}

// The receiver every consumer runs: two lines (make it, serve it); the rest sends it one signed ping.
const RECEIVER = {
  imports: {
    esm: "import { createServer } from 'node:http';\nimport { createNodeHandler, svcBoardWebhook } from 'svc-webhooks';\nimport { boardEvent, signBoardEvent, silentLogger } from 'svc-webhooks/testing';\nimport { webhookSecretProblem } from 'svc-webhooks/client';\nimport { watchWebhooks } from 'svc-webhooks/watch';\n",
    cjs: "const { createServer } = require('node:http');\nconst { createNodeHandler, svcBoardWebhook } = require('svc-webhooks');\nconst { boardEvent, signBoardEvent, silentLogger } = require('svc-webhooks/testing');\nconst { webhookSecretProblem } = require('svc-webhooks/client');\nconst { watchWebhooks } = require('svc-webhooks/watch');\n",
  },
  body: (ts) => `
const secret = 'consumer-project-secret-0123456789';
let handled = 0;

const board = svcBoardWebhook({ secret, logger: silentLogger }).on('ping', (event${ts ? ', ctx' : ''}) => { handled += event.sequence === 0 ? 1 : 0; });
const server = createServer(createNodeHandler(board));
${
  ts
    ? `
/** Never called: proves the types are the library's, not \`any\`. */
export function typesAreLoaded(): void {
  board.on('task.moved_out', (event, ctx) => {
    const key: string = event.task.key;
    const sequence: number = ctx.sequence;
    // @ts-expect-error a moved-out task has no title
    void event.task.title;
    void [key, sequence];
  });
  // @ts-expect-error the signing helpers need a secret
  signBoardEvent(boardEvent('ping'), {});
  // @ts-expect-error the watcher needs its options
  watchWebhooks();
}
`
    : ''
}
server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address()${ts ? ' as import("node:net").AddressInfo' : ''};
  const signed = signBoardEvent(boardEvent('ping'), { secret });
  const res = await fetch(\`http://127.0.0.1:\${port}/webhooks/board\`, { method: 'POST', headers: signed.headers, body: signed.body });
  server.close();
  // The sub-paths: the setup client's checks and the watcher.
  if (webhookSecretProblem(secret) !== undefined || webhookSecretProblem('short') === undefined || typeof watchWebhooks !== 'function') {
    console.error('svc-webhooks/client or svc-webhooks/watch did not load');
    process.exit(1);
  }
  if (res.status !== 200 || handled !== 1) {
    console.error(\`expected 200 and one handled ping, got \${res.status} and \${handled}: \${await res.text()}\`);
    process.exit(1);
  }
  console.log('ok');
});
`,
};

function tsconfig(module, moduleResolution) {
  return {
    compilerOptions: {
      target: 'ES2022',
      module,
      moduleResolution,
      strict: true,
      skipLibCheck: false,
      esModuleInterop: true,
      types: ['node'],
      outDir: 'out',
      rootDir: '.',
    },
    files: ['main.ts'],
  };
}

/** Each consumer: its files, whether it installs the TypeScript types of Node, and how it runs. */
const CONSUMERS = [
  { name: 'esm', type: 'module', files: { 'main.js': RECEIVER.imports.esm + RECEIVER.body(false) }, main: 'main.js', extra: 'esm' },
  { name: 'cjs', type: 'commonjs', files: { 'main.js': RECEIVER.imports.cjs + RECEIVER.body(false) }, main: 'main.js', extra: 'cjs' },
  {
    name: 'ts-node10-cjs',
    type: 'commonjs',
    ts: tsconfig('commonjs', 'node10'),
    files: { 'main.ts': RECEIVER.imports.esm + RECEIVER.body(true) },
    main: 'out/main.js',
  },
  {
    name: 'ts-node16-cjs',
    type: 'commonjs',
    ts: tsconfig('node16', 'node16'),
    files: { 'main.ts': RECEIVER.imports.esm + RECEIVER.body(true) },
    main: 'out/main.js',
  },
  {
    name: 'ts-nodenext-esm',
    type: 'module',
    ts: tsconfig('nodenext', 'nodenext'),
    files: { 'main.ts': RECEIVER.imports.esm + RECEIVER.body(true) },
    main: 'out/main.js',
  },
  {
    name: 'ts-bundler-esm',
    type: 'module',
    ts: tsconfig('esnext', 'bundler'),
    files: { 'main.ts': RECEIVER.imports.esm + RECEIVER.body(true) },
    main: 'out/main.js',
  },
];

function checkTarball(files) {
  const paths = new Set(files.map((f) => f.path));
  const required = [
    'package.json',
    'dist/index.js',
    'dist/index.mjs',
    'dist/index.d.ts',
    'dist/index.d.mts',
    'dist/testing/index.js',
    'dist/testing/index.mjs',
    'dist/testing/index.d.ts',
    'dist/testing/index.d.mts',
    'dist/client/index.js',
    'dist/client/index.mjs',
    'dist/client/index.d.ts',
    'dist/client/index.d.mts',
    'dist/watch/index.js',
    'dist/watch/index.mjs',
    'dist/watch/index.d.ts',
    'dist/watch/index.d.mts',
    'dist/cli/main.js',
    'bin/svc-webhooks.js',
    'testing/package.json',
    'client/package.json',
    'watch/package.json',
    'schemas/board-webhook-event.schema.json',
    'sql/postgres-store.sql',
  ];
  // The README's links work in node_modules: the pages it links to are shipped beside it.
  required.push('dist/web.mjs', 'dist/web.d.mts', 'LICENSE', 'README.md', 'CHANGELOG.md', 'docs/errors.md', 'docs/testing.md');
  const missing = required.filter((p) => !paths.has(p));
  if (missing.length > 0) throw new Error(`the tarball lacks ${missing.join(', ')}`);
  const tests = [...paths].filter((p) => p.startsWith('test/') || p.startsWith('bench/') || p.startsWith('examples/'));
  if (tests.length > 0) throw new Error(`the tarball ships files that are not the library: ${tests.slice(0, 5).join(', ')}`);
}

/** Every source map shipped must point at sources that are shipped too. */
function checkSourceMaps(packageDir, files) {
  const maps = files.map((f) => f.path).filter((p) => p.endsWith('.map'));
  for (const map of maps) {
    const { sources = [], sourcesContent } = JSON.parse(readFileSync(join(packageDir, map), 'utf8'));
    sources.forEach((source, i) => {
      if (sourcesContent?.[i] != null) return;
      if (!existsSync(join(packageDir, dirname(map), source))) throw new Error(`${map} points at ${source}, which the package does not ship`);
    });
  }
  return maps.length;
}

const work = mkdtempSync(join(tmpdir(), 'svc-webhooks-package-'));
const started = Date.now();
let failed = false;
try {
  // As from a fresh clone: no build output until packing makes it (the `prepack` script).
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  const manifest = readFileSync(join(root, 'package.json'), 'utf8');
  const [packed] = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', work, '--loglevel=error'], root));
  // prepack takes `prepare` out of the packed package.json (scripts/pack-manifest.mjs); postpack puts it back.
  if (readFileSync(join(root, 'package.json'), 'utf8') !== manifest) throw new Error('npm pack left package.json changed');
  const tarball = join(work, packed.filename);
  checkTarball(packed.files);
  console.log(`packed ${packed.filename}: ${packed.files.length} files, ${Math.round(packed.size / 1024)} KiB`);
  run(join(root, 'node_modules', '.bin', 'publint'), [tarball, '--strict'], root);
  run(join(root, 'node_modules', '.bin', 'attw'), [tarball], root);
  console.log('  publint and are-the-types-wrong: no problems');

  for (const consumer of CONSUMERS) {
    const dir = join(work, consumer.name);
    const devDependencies = consumer.ts ? TYPES : {};
    write(dir, {
      'package.json': {
        name: `consumer-${consumer.name}`,
        version: '1.0.0',
        private: true,
        type: consumer.type,
        dependencies: { 'svc-webhooks': `file:${tarball}` },
        devDependencies,
      },
      ...consumer.files,
      ...(consumer.ts ? { 'tsconfig.json': consumer.ts } : {}),
    });
    // At npm's default log level, where it warns of install scripts.
    const installed = run(
      npm,
      INSTALL.filter((a) => !a.startsWith('--loglevel')),
      dir,
      { withStderr: true },
    );
    if (/install.?script/i.test(installed)) throw new Error(`${consumer.name}: npm install warned of install scripts:\n${installed}`);
    if (consumer.ts) run(process.execPath, [tsc, '-p', 'tsconfig.json'], dir);
    const out = run(process.execPath, [consumer.main], dir).trim();
    if (out !== 'ok') throw new Error(`${consumer.name}: the receiver printed ${JSON.stringify(out)}`);
    if (consumer.extra !== undefined) {
      const script = defaultSetupScript(consumer.extra);
      writeFileSync(join(dir, script.file), script.text);
      run(process.execPath, ['-e', script.sign], dir);
      run(process.execPath, [script.file], dir);
      const problems = checkDefaultSetup(dir, consumer.extra);
      if (problems.length > 0) throw new Error(`${consumer.name}: ${problems.join('; ')}`);
      console.log(`  ${consumer.name}: the default setup loaded its own bundle and every runtime dependency, the Redis store only when used`);
    }
    if (consumer.extra === 'cjs') {
      const installed = join(dir, 'node_modules', 'svc-webhooks');
      const scripts = Object.keys(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).scripts ?? {}).filter((name) =>
        INSTALL_SCRIPTS.includes(name),
      );
      if (scripts.length > 0) throw new Error(`the package has scripts that run on install: ${scripts.join(', ')}`);
      if (existsSync(join(dir, 'node_modules', 'ajv'))) throw new Error('ajv was installed although nothing loads it at run time');
      console.log(`  source maps: ${checkSourceMaps(installed, packed.files)} checked, every source shipped`);
      // The optional peer is not installed here, and the receiver above worked without it.
      if (existsSync(join(dir, 'node_modules', '@opentelemetry', 'api'))) throw new Error('@opentelemetry/api was installed although it is an optional peer');
      run(process.execPath, [join(dir, 'node_modules', '.bin', 'svc-webhooks'), '--help'], dir);
    }
    console.log(`  ${consumer.name}: installed, ${consumer.ts ? 'type-checked, ' : ''}received a signed delivery, loaded svc-webhooks/client and /watch`);
  }
  // Installed from git, as `npm install <git url>` does: npm clones, installs the dev dependencies,
  // runs `prepare` (the build) and packs. It installs the last commit, not uncommitted changes.
  const commit = run('git', ['rev-parse', 'HEAD'], root).trim();
  const gitDir = join(work, 'from-git');
  write(gitDir, {
    'package.json': { name: 'consumer-from-git', version: '1.0.0', private: true, dependencies: { 'svc-webhooks': `git+file://${root}#${commit}` } },
    'main.js': RECEIVER.imports.cjs + RECEIVER.body(false),
  });
  run(npm, INSTALL, gitDir);
  if (!existsSync(join(gitDir, 'node_modules', 'svc-webhooks', 'dist', 'index.js'))) throw new Error('installed from git, the package has no dist/');
  const fromGit = run(process.execPath, ['main.js'], gitDir).trim();
  if (fromGit !== 'ok') throw new Error(`from-git: the receiver printed ${JSON.stringify(fromGit)}`);
  console.log(`  from-git (${commit.slice(0, 12)}): installed with dist/ built by prepare, received a signed delivery`);
  console.log(`package test passed in ${Math.round((Date.now() - started) / 1000)} s`);
} catch (err) {
  failed = true;
  console.error(`package test failed: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
