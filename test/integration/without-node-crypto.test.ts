/**
 * The whole Fetch pipeline as it runs where the runtime has no Node modules (workerd, Vercel's Edge
 * runtime): the runtime is made to answer no node:crypto and no node:buffer, so every stage takes
 * its portable path (WebCrypto's async HMAC, TextDecoder, plain Uint8Arrays, the portable SHA-256).
 */
import { createHmac, randomUUID } from 'node:crypto';
import pino from 'pino';
import { createWebHandler, svcBoardWebhook, svcBotWebhook, verifyBoardDelivery, verifyBotDelivery, type DeliveryRecord } from '../../src/web';
import { boardEvent, botUpdate, signBoardEvent, signBotUpdate, silentLogger } from '../../src/testing';
import { mac } from '../../src/verify/mac';

jest.mock('../../src/internal/runtime/node-builtins', () => ({ nodeBuiltin: () => undefined }));

const SECRET = 'portable-path-secret-0123456789';
const OTHER = 'another-board-secret-0123456789';

function post(path: string, headers: Record<string, string>, body: string | Uint8Array | ReadableStream<Uint8Array>): Request {
  return new Request(`http://svc.test${path}`, { method: 'POST', headers, body, ...(body instanceof ReadableStream ? { duplex: 'half' } : {}) } as RequestInit);
}

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

/** A board delivery signed over exactly `body`. */
function signedBytes(body: Uint8Array, secret = SECRET): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000);
  const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
  return { 'Content-Type': 'application/json', 'X-Svc-Timestamp': String(timestamp), 'X-Svc-Signature': `v1=${mac}` };
}

async function answer(response: Response): Promise<[number, unknown]> {
  return [response.status, await response.json()];
}

describe('the Fetch pipeline without node:crypto and node:buffer', () => {
  const handled: string[] = [];
  const records: DeliveryRecord[] = [];
  const handle = createWebHandler(
    svcBoardWebhook({ secret: SECRET, logger: silentLogger })
      .onAny((event) => void handled.push(event.id))
      .onDelivery((record) => void records.push(record)),
  );
  beforeEach(() => {
    handled.length = 0;
    records.length = 0;
  });

  it('verifies with WebCrypto', () => {
    expect(mac().key(new Uint8Array(16)).kind).toBe('web');
  });

  it('handles a signed delivery once (200), and answers its repeat as a duplicate', async () => {
    const event = boardEvent('task.created', { task: { title: 'Jürgen’s 漢字 🚀' } });
    const signed = signBoardEvent(event, { secret: SECRET });
    expect(await answer(await handle(post('/webhooks/board', signed.headers, signed.body)))).toEqual([200, { ok: true }]);
    expect(await answer(await handle(post('/webhooks/board', signed.headers, signed.body)))).toEqual([200, { ok: true, duplicate: true }]);
    expect(handled).toEqual([event.id]);
  });

  it('remembers a delivery id that is no UUID (hashed by the portable SHA-256)', async () => {
    // The schema wants a UUID: only a policy that skips it lets another id through to the store.
    const ids: string[] = [];
    const lenient = createWebHandler(svcBoardWebhook({ secret: SECRET, logger: silentLogger, schemaPolicy: 'skip' }).onAny((event) => void ids.push(event.id)));
    const event = { ...boardEvent('ping'), id: 'delivery-not-a-uuid-1' };
    const signed = signBoardEvent(event, { secret: SECRET });
    const headers = { ...signed.headers, 'X-Svc-Delivery': event.id };
    expect((await lenient(post('/webhooks/board', headers, signed.body))).status).toBe(200);
    expect(await answer(await lenient(post('/webhooks/board', headers, signed.body)))).toEqual([200, { ok: true, duplicate: true }]);
    const next = signBoardEvent({ ...event, id: 'delivery-not-a-uuid-2' }, { secret: SECRET });
    expect((await lenient(post('/webhooks/board', { ...next.headers, 'X-Svc-Delivery': 'delivery-not-a-uuid-2' }, next.body))).status).toBe(200);
    expect(ids).toEqual([event.id, 'delivery-not-a-uuid-2']);
  });

  it('reads a body streamed in many chunks, and verifies its exact bytes', async () => {
    const event = boardEvent('task.created', { task: { description: 'é'.repeat(40_000) } });
    const signed = signBoardEvent(event, { secret: SECRET });
    const bytes = new TextEncoder().encode(signed.body);
    const chunks = [bytes.subarray(0, 1), bytes.subarray(1, 30_001), bytes.subarray(30_001)];
    expect((await handle(post('/webhooks/board', signed.headers, streamOf(chunks)))).status).toBe(200);
    expect(handled).toEqual([event.id]);
  });

  it('refuses a forged delivery: 401 signature_mismatch, the handler does not run, the record holds the body as a Uint8Array', async () => {
    const signed = signBoardEvent(boardEvent('task.created'), { secret: OTHER });
    expect(await answer(await handle(post('/webhooks/board', signed.headers, signed.body)))).toEqual([
      401,
      expect.objectContaining({ code: 'signature_mismatch' }),
    ]);
    expect(handled).toEqual([]);
    const body = records[0]!.body!;
    expect([body instanceof Uint8Array, Buffer.isBuffer(body)]).toEqual([true, false]);
    expect(new TextDecoder().decode(body)).toBe(signed.body);
  });

  it('names the board a forged delivery claims in the refusal’s log line, as on Node', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const logged = createWebHandler(svcBoardWebhook({ secret: SECRET, logger }).onAny(() => undefined));
    const forged = signBoardEvent(boardEvent('task.created', { board: { id: 'claimed-board-7' } }), { secret: OTHER });
    expect((await logged(post('/webhooks/board', forged.headers, forged.body))).status).toBe(401);
    expect(lines.find((line) => line.code === 'signature_mismatch')).toMatchObject({ unverified: expect.objectContaining({ boardId: 'claimed-board-7' }) });
  });

  it('refuses an oversized body: declared (413) and streamed without a length (413)', async () => {
    const event = boardEvent('task.created', { task: { description: 'x'.repeat(600 * 1024) } });
    const signed = signBoardEvent(event, { secret: SECRET });
    const declared = { ...signed.headers, 'Content-Length': String(64 * 1024 * 1024) };
    expect(await answer(await handle(new Request('http://svc.test/webhooks/board', { method: 'POST', headers: declared })))).toEqual([
      413,
      expect.objectContaining({ code: 'body_too_large' }),
    ]);
    const bytes = new TextEncoder().encode(signed.body);
    const chunks = Array.from({ length: 10 }, (_, i) => bytes.subarray(i * 64 * 1024, (i + 1) * 64 * 1024));
    expect(await answer(await handle(post('/webhooks/board', signed.headers, streamOf(chunks))))).toEqual([
      413,
      expect.objectContaining({ code: 'body_too_large' }),
    ]);
    expect(handled).toEqual([]);
  });

  it('refuses signed bytes that are not UTF-8 (400 invalid_utf8) and a signed byte order mark (400 invalid_json)', async () => {
    const notUtf8 = Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);
    expect(await answer(await handle(post('/webhooks/board', signedBytes(notUtf8), notUtf8)))).toEqual([
      400,
      expect.objectContaining({ code: 'invalid_utf8' }),
    ]);
    const bom = Uint8Array.from([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(JSON.stringify(boardEvent('ping')))]);
    expect(await answer(await handle(post('/webhooks/board', signedBytes(bom), bom)))).toEqual([400, expect.objectContaining({ code: 'invalid_json' })]);
  });

  it('verifies each board with its own secret through a resolver', async () => {
    const [boardA, boardB] = [randomUUID(), randomUUID()];
    const secrets: Record<string, string> = { [boardA]: SECRET, [boardB]: OTHER };
    const many = createWebHandler(svcBoardWebhook({ secret: ({ boardId }) => secrets[boardId], logger: silentLogger }).onAny(() => undefined));
    const eventOf = (board: string) => boardEvent('task.created', { board: { id: board } });
    const a = signBoardEvent(eventOf(boardA), { secret: SECRET });
    expect((await many(post('/webhooks/board', a.headers, a.body))).status).toBe(200);
    const crossed = signBoardEvent(eventOf(boardA), { secret: OTHER });
    expect(await answer(await many(post('/webhooks/board', crossed.headers, crossed.body)))).toEqual([
      401,
      expect.objectContaining({ code: 'signature_mismatch' }),
    ]);
  });

  it('handles a bot update; refuses a forged one (401)', async () => {
    const seen: string[] = [];
    const bot = createWebHandler(svcBotWebhook({ secret: SECRET, logger: silentLogger }).onAny((_data, ctx) => void seen.push(ctx.deliveryId)));
    const update = botUpdate('messageCreate');
    const signed = signBotUpdate(update, { secret: SECRET });
    expect((await bot(post('/webhooks/bot', signed.headers, signed.body))).status).toBe(200);
    const forged = signBotUpdate(botUpdate('messageCreate'), { secret: OTHER });
    expect(await answer(await bot(post('/webhooks/bot', forged.headers, forged.body)))).toEqual([401, expect.objectContaining({ code: 'signature_mismatch' })]);
    expect(seen).toEqual([update.id]);
  });

  it('runs the standalone verifiers: resolved when signed, rejected when forged', async () => {
    const event = boardEvent('ping');
    const signed = signBoardEvent(event, { secret: SECRET });
    await expect(verifyBoardDelivery({ body: signed.body, headers: signed.headers, secret: [OTHER, SECRET] })).resolves.toMatchObject({
      deliveryId: event.id,
      known: true,
    });
    await expect(verifyBoardDelivery({ body: signed.body, headers: signed.headers, secret: OTHER })).rejects.toMatchObject({
      code: 'signature_mismatch',
      status: 401,
    });
    const update = botUpdate('taskCreate');
    const bot = signBotUpdate(update, { secret: SECRET });
    await expect(verifyBotDelivery({ body: new TextEncoder().encode(bot.body), headers: bot.headers, secret: SECRET })).resolves.toMatchObject({
      deliveryId: update.id,
      kind: 'taskCreate',
    });
    await expect(verifyBotDelivery({ body: bot.body, headers: bot.headers, secret: OTHER })).rejects.toMatchObject({ code: 'signature_mismatch' });
  });
});
