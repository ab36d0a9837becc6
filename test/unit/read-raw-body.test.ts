import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { SvcWebhookError } from '../../src';
import { BODY_TIMEOUT_MS, readRawBody } from '../../src/capture/read-raw-body';

function request(headers: Record<string, string>): PassThrough & IncomingMessage {
  return Object.assign(new PassThrough(), { headers }) as unknown as PassThrough & IncomingMessage;
}

describe('readRawBody', () => {
  afterEach(() => jest.useRealTimers());

  it('returns the exact bytes', async () => {
    const req = request({ 'content-length': '5' });
    const read = readRawBody(req, 1024);
    req.end(Buffer.from('{"a"}'));
    expect((await read).toString()).toBe('{"a"}');
  });

  it('gives up on a body that stalls past the sender’s 10 s, with 408 body_timeout', async () => {
    jest.useFakeTimers();
    const req = request({ 'content-length': '100' });
    const read = readRawBody(req, 1024);
    req.write('{"id":');
    jest.advanceTimersByTime(BODY_TIMEOUT_MS);
    const err = await read.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcWebhookError);
    expect((err as SvcWebhookError).code).toBe('body_timeout');
    expect((err as SvcWebhookError).status).toBe(408);
  });

  it('400 body_read_failed when the body is shorter than Content-Length', async () => {
    const req = request({ 'content-length': '100' });
    const read = readRawBody(req, 1024);
    req.end('{}');
    await expect(read).rejects.toMatchObject({ code: 'body_read_failed' });
  });
});
