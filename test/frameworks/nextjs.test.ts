import { boardEvent, signBoardEvent, type SignedDelivery } from '../../src/testing';
import { CONTRACT_SECRET } from '../support/webhook-contract';

type Route = typeof import('../../examples/frameworks/nextjs/app/api/webhooks/board/route');
type Lib = typeof import('../../examples/frameworks/nextjs/lib/board-webhook');

type RequestBody = NonNullable<RequestInit['body']>;

const URL = 'http://127.0.0.1:3000/api/webhooks/board';

function requestOf(signed: SignedDelivery, body: RequestBody = signed.body, extra: Record<string, string> = {}): Request {
  return new Request(URL, { method: 'POST', headers: { ...signed.headers, ...extra }, body, duplex: 'half' } as RequestInit);
}

/** A body stream that yields `chunk` `count` times and counts how many chunks were pulled. */
function countedStream(chunk: Uint8Array, count: number): { stream: ReadableStream<Uint8Array>; pulled: () => number; cancelled: () => boolean } {
  let pulled = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === count) return controller.close();
      pulled++;
      controller.enqueue(chunk);
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, pulled: () => pulled, cancelled: () => cancelled };
}

// The route handler is tested by calling its exported POST with real Requests, as Next.js does;
// `next` itself is not started (its route handlers are plain (Request) => Promise<Response>).
describe('the Next.js App Router recipe (route.ts exports POST = createWebHandler(board))', () => {
  let POST: Route['POST'];
  let handled = 0;

  beforeAll(async () => {
    process.env.SVC_BOARD_WEBHOOK_SECRET = CONTRACT_SECRET;
    process.env.LOG_LEVEL = 'silent';
    ({ POST } = await import('../../examples/frameworks/nextjs/app/api/webhooks/board/route'));
    const { board }: Lib = await import('../../examples/frameworks/nextjs/lib/board-webhook');
    board.onAny(() => void handled++);
  });

  it('runs on the Node.js runtime', async () => {
    const route = await import('../../examples/frameworks/nextjs/app/api/webhooks/board/route');
    expect(route.runtime).toBe('nodejs');
  });

  it('a signed delivery: 200, the handler runs once', async () => {
    const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
    const res = await POST(requestOf(signed));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(handled).toBe(1);
  });

  it('the same delivery again: 200 duplicate, the handler does not run again', async () => {
    const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
    await POST(requestOf(signed));
    const before = handled;
    const res = await POST(requestOf(signed));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, duplicate: true });
    expect(handled).toBe(before);
  });

  it('a forged delivery: 401 signature_mismatch', async () => {
    const before = handled;
    const signed = signBoardEvent(boardEvent('task.created'), { secret: 'not-the-webhook-secret-0123456789' });
    const res = await POST(requestOf(signed));
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('signature_mismatch');
    expect(handled).toBe(before);
  });

  it('a declared oversize body: 413 without reading any of it, and the body is cancelled', async () => {
    const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
    const body = countedStream(new Uint8Array(64 * 1024), 1024);
    const res = await POST(requestOf(signed, body.stream, { 'Content-Length': String(64 * 1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe('body_too_large');
    expect(body.pulled()).toBeLessThanOrEqual(1); // a stream may pull one chunk ahead of any reader
    expect(body.cancelled()).toBe(true);
  });

  it('a streamed oversize body without a length: 413 once past the limit, the rest never pulled', async () => {
    const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
    const body = countedStream(new Uint8Array(64 * 1024), 1024); // 64 MB on offer
    const res = await POST(requestOf(signed, body.stream));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe('body_too_large');
    // The limit is 512 KiB: nine 64 KiB chunks pass it; a stream may pull one ahead.
    expect(body.pulled()).toBeLessThanOrEqual(10);
    expect(body.cancelled()).toBe(true);
  });
});

// The edge route: what Next.js bundles for its edge runtime (the edge-light condition) must import
// no Node module; its handler answers as the Node.js route's does.
describe('the Next.js edge route recipe (board-edge/route.ts, runtime = "edge")', () => {
  const ROUTE = '../../examples/frameworks/nextjs/app/api/webhooks/board-edge/route';
  let POST: (request: Request) => Promise<Response>;

  beforeAll(async () => {
    process.env.SVC_BOARD_WEBHOOK_SECRET = CONTRACT_SECRET;
    const route = (await import(ROUTE)) as { POST: typeof POST; runtime: string };
    expect(route.runtime).toBe('edge');
    POST = route.POST;
  });

  it('bundles for the edge runtime without any Node module', async () => {
    const { build } = await import('esbuild');
    const { webBundleOptions } = require('../../scripts/web-bundle.cjs') as {
      webBundleOptions: (o: { entry: string; outfile: string }) => import('esbuild').BuildOptions;
    };
    const bundled = await build({
      ...webBundleOptions({ entry: require.resolve(ROUTE), outfile: 'route.mjs' }),
      write: false,
      conditions: ['edge-light', 'worker', 'browser'],
    });
    expect(bundled.errors).toEqual([]);
    expect(bundled.outputFiles![0]!.text).toContain('createWebHandler');
  });

  it('a signed delivery: 200; the same again: a duplicate; a forged one: 401 signature_mismatch', async () => {
    const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
    expect((await POST(requestOf(signed))).status).toBe(200);
    expect(await (await POST(requestOf(signed))).json()).toEqual({ ok: true, duplicate: true });
    const forged = signBoardEvent(boardEvent('task.created'), { secret: 'not-the-webhook-secret-0123456789' });
    const refused = await POST(requestOf(forged));
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([401, 'signature_mismatch']);
  });
});
