/**
 * The inspector's panel of webhook states, end to end: `examples/bot-server.ts` runs as a real child
 * process watching its webhooks on an emulated svc, and its page, open in Debian's headless Chromium,
 * shows each webhook's state and follows its changes without a reload.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startExampleServer, type ExampleServer } from '../support/example-server';
import { emulatedSvc, type EmulatedSvc } from '../support/emulated-svc';
import { BOARD_SECRET, BOT_SECRET } from '../support/sign';

const CHROMIUM = '/usr/bin/chromium';
const SETUP_MS = 60_000;
// The panel asks every 5 s.
const APPEAR_MS = 15_000;
const HOSTILE = '<img src=x onerror="globalThis.pwned=1">';

describe("example server: the inspector's panel of webhook states", () => {
  let svc: EmulatedSvc;
  let server: ExampleServer | undefined;
  let browser: Browser | undefined;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Debian's chromium is missing at ${CHROMIUM}; this end-to-end test needs it`);
    svc = await emulatedSvc({ boards: 2 });
    // The receiver's answer, quoted by svc in lastError, carries markup.
    svc.sink.body = HOSTILE;
    await svc.failSince(svc.boardIds[1]!, 0);
    server = await startExampleServer(
      {
        HOST: '127.0.0.1',
        SVC_BOT_WEBHOOK_SECRET: BOT_SECRET,
        SVC_BOARD_WEBHOOK_SECRET: BOARD_SECRET,
        SVC_BASE_URL: svc.svc.baseUrl,
        SVC_TOKEN: svc.svc.person.token,
        SVC_BOT_TOKEN: svc.svc.bot.token,
        SVC_WATCH_BOARDS: svc.boardIds.join(','),
        SVC_WATCH_INTERVAL_MS: '200',
      },
      SETUP_MS - 10_000,
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    page = await browser.newPage();
    await page.goto(`${server.base}/inspector`);
  }, SETUP_MS);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await svc?.close();
  }, SETUP_MS);

  it("shows one row per webhook with its state; svc's text as text, never as markup", async () => {
    await page.locator('#webhooks tr.webhook').nth(2).waitFor({ timeout: APPEAR_MS });
    const rows = await page
      .locator('#webhooks tr.webhook')
      .evaluateAll((trs) => trs.map((tr) => [tr.querySelector('td.which')!.textContent, tr.getAttribute('data-state')]));
    expect(rows).toEqual([
      [`board ${svc.boardIds[0]}`, 'healthy'],
      [`board ${svc.boardIds[1]}`, 'failing'],
      ['bot', 'healthy'],
    ]);
    expect(await page.locator('#webhooks tr[data-state="failing"] td.summary').textContent()).toContain(HOSTILE);
    expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined();
  });

  it('follows a change without a reload', async () => {
    await page.evaluate(() => ((globalThis as any).sameDocument = true));
    svc.svc.setPlan('free', svc.boardIds[0]!);
    await page.locator(`#webhooks tr[data-state="paused"]`, { hasText: svc.boardIds[0]! }).waitFor({ timeout: APPEAR_MS });
    expect(await page.evaluate(() => (globalThis as any).sameDocument)).toBe(true);
    expect(await page.content()).not.toContain(svc.svc.person.token);
  });
});
