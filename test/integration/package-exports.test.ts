import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

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
});
