/**
 * The example server's live inspector, end to end: `examples/bot-server.ts` runs as a real child process,
 * its page is open in Debian's headless Chromium, and deliveries sent to the webhooks must appear on
 * the page without a reload.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { rawPreview } from '../../examples/inspector/delivery-inspector';
import { startExampleServer, type ExampleServer } from '../support/example-server';
import { BOARD_SECRET, BOT_SECRET, fixture, signBoard, signBot, type SignedRequest } from '../support/sign';

const CHROMIUM = '/usr/bin/chromium';
// Chromium and tsx both start slowly on a small CI machine, and answer slowly on a loaded one: the
// waits are bounds on a hang, not on speed.
const SETUP_MS = 60_000;
const APPEAR_MS = 20_000;

describe('example server: live delivery inspector', () => {
  let server: ExampleServer | undefined;
  let base = '';
  let browser: Browser | undefined;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`Debian's chromium is missing at ${CHROMIUM}; this end-to-end test needs it: install it with \`apt-get install chromium\``);
    }
    server = await startExampleServer({ HOST: '127.0.0.1', SVC_BOT_WEBHOOK_SECRET: BOT_SECRET, SVC_BOARD_WEBHOOK_SECRET: BOARD_SECRET }, SETUP_MS - 10_000);
    base = server.base;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage();
    await page.goto(`${base}/inspector`);
    await page.locator('#status[data-state="live"]').waitFor({ timeout: APPEAR_MS });
    // A mark that a reload would erase: the rows must arrive over the open event stream.
    await page.evaluate(() => ((globalThis as any).sameDocument = true));
  }, SETUP_MS);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, SETUP_MS);

  async function post(path: string, signed: SignedRequest): Promise<number> {
    return (await send(path, signed)).status;
  }

  /** Posts and returns the status and the receiver's answer (its `message` for a refusal). */
  async function send(path: string, signed: SignedRequest): Promise<{ status: number; answer: { code?: string; message?: string } }> {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: signed.headers, body: signed.body });
    return { status: res.status, answer: (await res.json()) as { code?: string; message?: string } };
  }

  /** The row of a delivery, once it is on the page. */
  async function rowOf(deliveryId: string, outcome = 'handled'): Promise<Locator> {
    const row = page.locator(`tr.delivery[data-outcome="${outcome}"]`, { hasText: deliveryId });
    await row.waitFor({ timeout: APPEAR_MS });
    return row;
  }

  /** The shown text of a row's cells, by column. */
  async function cells(row: Locator): Promise<Record<string, string | null>> {
    const columns = {
      webhook: 'td.webhook',
      kind: 'td.kind',
      id: 'td.id',
      outcome: 'td.outcome .pill',
      status: 'td.status',
      code: 'td.code',
      message: 'td.message',
    };
    const texts = await Promise.all(Object.values(columns).map((selector) => row.locator(selector).textContent()));
    // Every row shows when it arrived, to the millisecond.
    expect(await row.locator('td.time').textContent()).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);
    return Object.fromEntries(Object.keys(columns).map((name, i) => [name, texts[i] ?? null]));
  }

  /** Opens a row's details and returns them. */
  async function open(row: Locator): Promise<Locator> {
    await row.click();
    const detail = row.locator('xpath=following-sibling::tr[1][contains(@class, "detail")]');
    await detail.waitFor({ timeout: APPEAR_MS });
    return detail;
  }

  it('prints the inspector URL and how to turn it off beside the send hints, each hint on one line, none holding a secret', () => {
    const output = server!.output();
    expect(output).toContain(
      `Watch deliveries arrive live: ${base}/inspector (SVC_INSPECTOR=off turns it off; behind a proxy or tunnel, SVC_INSPECTOR=token)\n`,
    );
    const lines = output.split('\n');
    expect(lines.filter((l) => l.includes('npx svc-webhooks send') && l.includes(`${base}/webhooks/bot`))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('id=') && l.includes(`${base}/webhooks/board`))).toHaveLength(1);
    expect(output).not.toContain(BOT_SECRET);
    expect(output).not.toContain(BOARD_SECRET);
  });

  it('shows a signed bot delivery as it arrives, and its second send as a duplicate', async () => {
    const update = fixture('bot', 'messageCreate');
    const signed = signBot(update, { secret: BOT_SECRET });

    expect(await post('/webhooks/bot', signed)).toBe(200);
    expect(await cells(await rowOf(update.id))).toEqual({
      webhook: 'bot',
      kind: 'messageCreate',
      id: update.id,
      outcome: 'handled',
      status: '200',
      code: '—',
      message: '—',
    });

    expect(await post('/webhooks/bot', signed)).toBe(200);
    const duplicate = await rowOf(update.id, 'duplicate');
    expect(await cells(duplicate)).toEqual({
      webhook: 'bot',
      kind: 'messageCreate',
      id: update.id,
      outcome: 'duplicate',
      status: '200',
      code: '—',
      message: '—',
    });
    // A duplicate was verified too: its body is shown whole.
    const detail = await open(duplicate);
    expect(await detail.locator('pre.body').textContent()).toBe(JSON.stringify(update, null, 2));
    await duplicate.click();
    await detail.waitFor({ state: 'detached', timeout: APPEAR_MS });
    expect(await page.evaluate(() => (globalThis as any).sameDocument)).toBe(true);
  });

  it('shows a signed board delivery as it arrives, with its event type', async () => {
    const event = fixture('board', 'task.created');

    expect(await post('/webhooks/board', signBoard(event, { secret: BOARD_SECRET }))).toBe(200);
    expect(await cells(await rowOf(event.id))).toEqual({
      webhook: 'board',
      kind: 'task.created',
      id: event.id,
      outcome: 'handled',
      status: '200',
      code: '—',
      message: '—',
    });
    expect(await page.evaluate(() => (globalThis as any).sameDocument)).toBe(true);
  });

  it('shows the body pretty-printed on click, as text even when it holds markup', async () => {
    const markup = '<img src="x" onerror="window.pwned = true"><b>not bold</b>';
    const update = fixture('bot', 'messageCreate');
    update.event.messageCreate.message.content = markup;
    expect(await post('/webhooks/bot', signBot(update, { secret: BOT_SECRET }))).toBe(200);

    const row = await rowOf(update.id);
    await row.click();
    const body = page.locator('tr.detail pre.body');
    await body.waitFor({ timeout: APPEAR_MS });
    expect(await body.textContent()).toBe(JSON.stringify(update, null, 2));
    expect(await body.locator('*').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined();

    await row.click();
    await body.waitFor({ state: 'detached', timeout: APPEAR_MS });
  });

  it('shows a forged delivery as a signature refusal: code, message, and its body only as size and an escaped preview, marked unverified', async () => {
    const update = fixture('bot', 'messageCreate');
    // Markup and a right-to-left override in the forged body: shown as escaped text, never rendered.
    update.event.messageCreate.message.content = '\u202e<img src="x" onerror="window.pwned = true">';
    const forged = signBot(update, { secret: 'not-the-bot-secret-0123456789abcd' });
    const { status, answer } = await send('/webhooks/bot', forged);
    expect(status).toBe(401);
    expect(answer.code).toBe('signature_mismatch');

    const row = page.locator('tr.delivery[data-outcome="rejected"]').filter({ has: page.locator('td.code', { hasText: 'signature_mismatch' }) });
    await row.waitFor({ timeout: APPEAR_MS });
    expect(await row.getAttribute('data-verified')).toBe('false');
    expect(await cells(row)).toEqual({
      webhook: 'bot',
      kind: '—',
      id: '—',
      outcome: 'rejected',
      status: '401',
      code: 'signature_mismatch',
      message: answer.message,
    });

    const detail = await open(row);
    expect(await detail.locator('pre.body').count()).toBe(0);
    expect(await detail.locator('p.unverified').textContent()).toContain(`${Buffer.byteLength(forged.body)} bytes`);
    const expected = rawPreview(Buffer.from(forged.body));
    expect(expected.truncated).toBe(true);
    expect(await detail.locator('pre.preview').textContent()).toBe(`${expected.preview} …`);
    expect(await detail.locator('pre.preview *').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined();
    expect(await page.content()).not.toContain(forged.headers['X-Svc-Signature']!.slice('sha256='.length));
  });

  it('shows a schema refusal with its delivery id, type, message, failing paths and verified body', async () => {
    const event = fixture('board', 'task.created');
    event.task.title = 42;
    const { status, answer } = await send('/webhooks/board', signBoard(event, { secret: BOARD_SECRET }));
    expect(status).toBe(400);
    expect(answer.code).toBe('schema_violation');

    const row = await rowOf(event.id, 'rejected');
    expect(await row.getAttribute('data-verified')).toBe('true');
    expect(await cells(row)).toEqual({
      webhook: 'board',
      kind: 'task.created',
      id: event.id,
      outcome: 'rejected',
      status: '400',
      code: 'schema_violation',
      message: answer.message,
    });

    const detail = await open(row);
    expect(await detail.locator('ul.problems li code.path').allTextContents()).toContain('/task/title');
    expect(await detail.locator('pre.body').textContent()).toBe(JSON.stringify(event, null, 2));
  });

  it('shows a request refused before its body was read with its code and message, and no body', async () => {
    const update = fixture('bot', 'messageCreate');
    const unsigned = signBot(update);
    delete unsigned.headers['X-Svc-Signature'];
    const { status, answer } = await send('/webhooks/bot', unsigned);
    expect(status).toBe(401);

    const row = page.locator('tr.delivery[data-outcome="rejected"]').filter({ has: page.locator('td.code', { hasText: 'signature_missing' }) });
    await row.waitFor({ timeout: APPEAR_MS });
    expect(await cells(row)).toEqual({
      webhook: 'bot',
      kind: '—',
      id: '—',
      outcome: 'rejected',
      status: '401',
      code: 'signature_missing',
      message: answer.message,
    });
    const detail = await open(row);
    expect(await detail.locator('p.nobody').count()).toBe(1);
    expect(await detail.locator('pre').count()).toBe(0);
  });

  it('lists the deliveries newest first as JSON, with no headers or signatures', async () => {
    const update = fixture('bot', 'messageCreate');
    const signed = signBot(update, { secret: BOT_SECRET });
    expect(await post('/webhooks/bot', signed)).toBe(200);

    const res = await fetch(`${base}/inspector/deliveries`);
    const text = await res.text();
    const { deliveries } = JSON.parse(text) as { deliveries: Array<Record<string, unknown>> };
    expect(deliveries[0]).toMatchObject({ webhook: 'bot', deliveryId: update.id, outcome: 'handled', status: 200 });
    const seqs = deliveries.map((d) => d.seq as number);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(text).not.toContain(signed.headers['X-Svc-Signature']!.slice('sha256='.length));
    // No headers are kept, so no signature of any delivery, forged or not, can be listed.
    for (const d of deliveries) expect(Object.keys(d)).not.toContain('headers');
    expect(text).not.toMatch(/(sha256|v1)=[0-9a-f]{64}/);
  });

  it(
    'stops on SIGTERM while the page holds its event stream open',
    async () => {
      // tsx passes the signal on to the server, whose shutdown ends the inspector's open streams.
      server!.child.kill('SIGTERM');
      expect(await exited(server!.child, 30_000)).toBe(0);
    },
    SETUP_MS,
  );
});

function exited(child: ChildProcess, ms: number): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`process ${child.pid} did not exit within ${ms} ms`)), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}
