import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

describe('the published package', () => {
  beforeAll(async () => {
    await run(process.execPath, ['scripts/build.mjs'], { cwd: root });
  }, 60_000);

  it('is usable from CommonJS by its name', async () => {
    const { stdout } = await run(process.execPath, ['-e', "const m = require('svc-webhooks'); console.log(typeof m.svcBoardWebhook, typeof m.svcBotWebhook, typeof m.SvcWebhookError)"], { cwd: root });
    expect(stdout.trim()).toBe('function function function');
  });

  it('is usable from ESM by its name, sharing one module instance with CommonJS', async () => {
    const script = "import { svcBoardWebhook, SvcWebhookError } from 'svc-webhooks'; import { createRequire } from 'node:module'; const cjs = createRequire(import.meta.url)('svc-webhooks'); console.log(typeof svcBoardWebhook, SvcWebhookError === cjs.SvcWebhookError)";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    expect(stdout.trim()).toBe('function true');
  });

  it('ships the PostgreSQL store\'s migration', async () => {
    const { stdout } = await run(process.execPath, ['-e', "console.log(require('node:fs').readFileSync(require.resolve('svc-webhooks/sql/postgres-store.sql'), 'utf8').includes('CREATE TABLE IF NOT EXISTS'))"], { cwd: root });
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
    const { stdout } = await run(process.execPath, ['--conditions=worker', '-e', "console.log(typeof require('svc-webhooks').createNodeHandler)"], { cwd: root });
    expect(stdout.trim()).toBe('function');
  });
});
