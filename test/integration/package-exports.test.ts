import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { boardEvent, signBoardEvent } from '../../src/testing';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const SECRET = 'package-exports-secret-0123456789';

/** Files of dist/ a child process had loaded, relative to dist/. */
const DIST_FILES = `(cache) => Object.keys(cache).filter((f) => f.startsWith(${JSON.stringify(join(root, 'dist'))})).map((f) => f.slice(${join(root, 'dist').length + 1})).sort()`;

/**
 * A child process that serves one signed delivery with the default setup (one board webhook, the
 * memory store, the default logger), then runs `after`; it prints a JSON report.
 */
function defaultSetup(kind: 'cjs' | 'esm', after = ''): string {
  const prelude =
    kind === 'cjs'
      ? "const { createServer } = require('node:http'); const api = require('svc-webhooks'); const cjs = api; const cache = require.cache;"
      : "import { createServer } from 'node:http'; import { createRequire } from 'node:module'; import * as api from 'svc-webhooks'; const cjs = createRequire(import.meta.url)('svc-webhooks'); const cache = createRequire(import.meta.url).cache;";
  return `${prelude}
const files = ${DIST_FILES};
const delivery = JSON.parse(process.env.DELIVERY);
const server = createServer(api.createNodeHandler(api.svcBoardWebhook({ secret: ${JSON.stringify(SECRET)}, logger: false }).on('task.created', () => undefined)));
server.listen(0, '127.0.0.1', async () => {
  const res = await fetch(\`http://127.0.0.1:\${server.address().port}/webhooks/board\`, { method: 'POST', headers: delivery.headers, body: delivery.body });
  await res.arrayBuffer();
  const report = { status: res.status, loaded: files(cache), openTelemetry: Object.keys(cache).some((f) => f.includes('/@opentelemetry/')) };
  ${after}
  server.close();
  console.log(JSON.stringify(report));
});`;
}

async function runChild(kind: 'cjs' | 'esm', script: string): Promise<Record<string, unknown>> {
  const signed = signBoardEvent(boardEvent('task.created'), { secret: SECRET });
  const args = kind === 'esm' ? ['--input-type=module', '-e', script] : ['-e', script];
  const { stdout } = await run(process.execPath, args, { cwd: root, env: { ...process.env, DELIVERY: JSON.stringify(signed) } });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

/** What the default setup may load of dist/: the core bundle and the schema validators (read at setup). */
const CORE_FILES = ['generated/validators.js', 'index.js'];

describe('the published package', () => {
  beforeAll(async () => {
    await run(process.execPath, ['scripts/build.mjs'], { cwd: root });
  }, 120_000);

  it('is usable from CommonJS by its name', async () => {
    const { stdout } = await run(
      process.execPath,
      ['-e', "const m = require('svc-webhooks'); console.log(typeof m.svcBoardWebhook, typeof m.svcBotWebhook, typeof m.SvcWebhookError)"],
      { cwd: root },
    );
    expect(stdout.trim()).toBe('function function function');
  });

  it('is usable from ESM by its name, sharing one module instance with CommonJS', async () => {
    const script =
      "import { svcBoardWebhook, SvcWebhookError } from 'svc-webhooks'; import { createRequire } from 'node:module'; const cjs = createRequire(import.meta.url)('svc-webhooks'); console.log(typeof svcBoardWebhook, SvcWebhookError === cjs.SvcWebhookError)";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    expect(stdout.trim()).toBe('function true');
  });

  it("ships the PostgreSQL store's migration", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '-e',
        "console.log(require('node:fs').readFileSync(require.resolve('svc-webhooks/sql/postgres-store.sql'), 'utf8').includes('CREATE TABLE IF NOT EXISTS'))",
      ],
      { cwd: root },
    );
    expect(stdout.trim()).toBe('true');
  });

  it('ships the JSON Schemas', async () => {
    const { stdout } = await run(process.execPath, ['-e', "console.log(require('svc-webhooks/schemas/board-webhook-event.schema.json').title)"], { cwd: root });
    expect(stdout.trim()).toBe('BoardWebhookEvent');
  });

  // What Wrangler (workerd, worker, browser) and Next.js edge routes or Vercel (edge-light, worker, browser) ask for.
  it.each([
    ['Cloudflare Workers', ['workerd', 'worker', 'browser']],
    ['Vercel Edge and Next.js edge routes', ['edge-light', 'worker', 'browser']],
  ])('gives the bundlers of %s the Fetch build, which imports no Node module', async (_who, conditions) => {
    const bundled = await build({
      stdin: { contents: "export { svcBoardWebhook, createWebHandler, verifyBoardDelivery } from 'svc-webhooks';", resolveDir: root },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      conditions,
      metafile: true,
      logLevel: 'silent',
    });
    expect(Object.keys(bundled.metafile.inputs)).toEqual(['dist/web.mjs', '<stdin>']);
    // esbuild's own helpers are its `<runtime>`: no module is imported.
    expect(bundled.metafile.inputs['dist/web.mjs']!.imports.filter((i) => i.path !== '<runtime>')).toEqual([]);
    expect(bundled.outputFiles[0]!.text).not.toMatch(/(from|import|require\()\s*["'](node:)?(crypto|buffer|stream|http|fs|net|events)["']/);
  });

  it('gives Node the Node build by its name, under any other condition too', async () => {
    const { stdout } = await run(process.execPath, ['--conditions=worker', '-e', "console.log(typeof require('svc-webhooks').createNodeHandler)"], {
      cwd: root,
    });
    expect(stdout.trim()).toBe('function');
  });

  describe('with the default setup (one webhook, memory store), serving a delivery', () => {
    // @opentelemetry/api is installed here (a dev dependency): with no provider registered, it is not loaded either.
    it('loads from CommonJS its core bundle only: no store, inbox, setup client, CLI, span code or OpenTelemetry', async () => {
      const report = await runChild('cjs', defaultSetup('cjs'));
      expect(report).toEqual({ status: 200, loaded: CORE_FILES, openTelemetry: false });
    });

    it('loads from ESM the same, through the ESM face', async () => {
      const report = await runChild('esm', defaultSetup('esm'));
      expect(report).toEqual({ status: 200, loaded: ['generated/validators.js', 'index.js', 'index.require.cjs'], openTelemetry: false });
    });
  });

  describe.each(['cjs', 'esm'] as const)('an optional part, from %s', (kind) => {
    it('loads on first use, and its class works with new, instanceof, extends and its factory', async () => {
      const after = `
  const client = { call: async () => 'OK' };
  const store = api.redisStore({ client });
  class Subclass extends api.RedisStore {}
  const sub = new Subclass({ client });
  Object.assign(report, {
    // The optional part's own file, and the chunks it shares only with other optional parts.
    loadedAfter: files(cache).filter((f) => !report.loaded.includes(f) && !f.startsWith('chunks/')),
    chunksAfter: files(cache).filter((f) => !report.loaded.includes(f) && f.startsWith('chunks/')).length,
    factoryMakesInstances: store instanceof api.RedisStore && store instanceof cjs.RedisStore,
    newMakesInstances: new api.RedisStore({ client }) instanceof cjs.RedisStore,
    subclassWorks: sub instanceof Subclass && sub instanceof api.RedisStore && typeof sub.claim === 'function',
    name: api.RedisStore.name,
  });`;
      const report = await runChild(kind, defaultSetup(kind, after));
      expect(report).toMatchObject({
        status: 200,
        loadedAfter: ['dedup/redis-store.js'],
        factoryMakesInstances: true,
        newMakesInstances: true,
        subclassWorks: true,
        name: 'RedisStore',
      });
      expect((report as { chunksAfter: number }).chunksAfter).toBeLessThanOrEqual(1);
    });
  });
});
