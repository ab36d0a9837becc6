import { boardEvent, signBoardEvent } from '../../src/testing';
import { CONTRACT_SECRET } from './contract-secret';
import { httpPost } from './http-client';

export { CONTRACT_SECRET };

/**
 * What every recipe must do over real HTTP, whatever the framework: a signed delivery is handled
 * once (2xx), its repeat is answered as a duplicate without running the handler again, a forged one
 * is refused 401, and an oversized one 413 (declared, and streamed without a length).
 * `handled()` counts the handler's runs (or reads the count from the server).
 */
export function describeWebhookContract(baseUrl: () => string, handled: () => number | Promise<number>, path = '/webhooks/board'): void {
  it('a signed delivery: 2xx, the handler runs once', async () => {
    const before = await handled();
    const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
    const res = await httpPost(baseUrl(), path, signed.headers, signed.body);
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(await handled()).toBe(before + 1);
  });

  it('the same delivery again: 200 duplicate, the handler does not run again', async () => {
    const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
    await httpPost(baseUrl(), path, signed.headers, signed.body);
    const before = await handled();
    const res = await httpPost(baseUrl(), path, signed.headers, signed.body);
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ ok: true, duplicate: true });
    expect(await handled()).toBe(before);
  });

  it('a forged delivery: 401 signature_mismatch, the handler does not run', async () => {
    const before = await handled();
    const signed = signBoardEvent(boardEvent('task.created'), { secret: 'not-the-webhook-secret-0123456789' });
    const res = await httpPost(baseUrl(), path, signed.headers, signed.body);
    expect(res.status).toBe(401);
    expect(res.json().code).toBe('signature_mismatch');
    expect(await handled()).toBe(before);
  });

  it('a declared oversize body: 413 body_too_large, answered without waiting for the rest', async () => {
    const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
    const res = await httpPost(baseUrl(), path, signed.headers, signed.body.slice(0, 100), { declaredLength: 64 * 1024 * 1024 });
    expect(res.status).toBe(413);
    expect(res.json().code).toBe('body_too_large');
  });

  it('a streamed oversize body without a length: 413 body_too_large', async () => {
    const before = await handled();
    const event = boardEvent('task.created');
    event.task.description = 'x'.repeat(600 * 1024);
    const signed = signBoardEvent(event, { secret: CONTRACT_SECRET });
    const res = await httpPost(baseUrl(), path, signed.headers, signed.body, { chunked: true });
    expect(res.status).toBe(413);
    expect(res.json().code).toBe('body_too_large');
    expect(await handled()).toBe(before);
  });
}
