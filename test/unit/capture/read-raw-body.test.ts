import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { SvcWebhookError } from '../../../src';
import { BODY_TIMEOUT_MS, readRawBody } from '../../../src/capture/read-raw-body';

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

  it('400 body_read_failed when the body is longer than Content-Length', async () => {
    const req = request({ 'content-length': '2' });
    const read = readRawBody(req, 1024);
    req.end('{"a":1}');
    await expect(read).rejects.toMatchObject({ code: 'body_read_failed', status: 400 });
  });

  it('takes a body of exactly `limit` bytes, and refuses one byte more while it streams (no Content-Length)', async () => {
    const exact = request({});
    const accepted = readRawBody(exact, 8);
    exact.end('12345678');
    expect((await accepted).toString()).toBe('12345678');

    const over = request({});
    const refused = readRawBody(over, 8);
    over.end('123456789');
    await expect(refused).rejects.toMatchObject({ code: 'body_too_large', status: 413 });
  });

  it('refuses a declared Content-Length over the limit at once, leaving the body unread and the stream paused', async () => {
    const req = request({ 'content-length': '9' });
    await expect(readRawBody(req, 8)).rejects.toMatchObject({ code: 'body_too_large', status: 413 });
    expect(req.listenerCount('data')).toBe(0);
    expect(req.isPaused()).toBe(true);
  });

  it('leaves no listener on the request once the body is read', async () => {
    const req = request({ 'content-length': '2' });
    const read = readRawBody(req, 1024);
    req.end('{}');
    await read;
    for (const event of ['data', 'end', 'error', 'close', 'aborted']) expect(req.listenerCount(event)).toBe(0);
  });

  it('a request that is aborted or fails mid-body: 400 body_read_failed', async () => {
    const aborted = request({ 'content-length': '100' });
    const first = readRawBody(aborted, 1024);
    aborted.write('{"id":');
    aborted.emit('aborted');
    await expect(first).rejects.toMatchObject({ code: 'body_read_failed', status: 400 });

    const broken = request({ 'content-length': '100' });
    const second = readRawBody(broken, 1024);
    broken.write('{"id":');
    broken.destroy(new Error('socket hang up'));
    await expect(second).rejects.toMatchObject({ code: 'body_read_failed', status: 400 });
  });

  it("an aborted request is refused with the library's own cause (the request closed), not the reader's error", async () => {
    const aborted = request({ 'content-length': '100' });
    const read = readRawBody(aborted, 1024);
    aborted.write('{"id":');
    aborted.emit('aborted');
    const err = (await read.catch((e: unknown) => e)) as SvcWebhookError;
    expect(err.code).toBe('body_read_failed');
    expect(err.cause).toBeInstanceOf(Error);
    expect(err.cause).not.toHaveProperty('type');
  });

  it('a stream set to decode text is refused: signatures are over bytes', async () => {
    const req = request({ 'content-length': '2' });
    req.setEncoding('utf8');
    const read = readRawBody(req, 1024);
    req.end('{}');
    const err = (await read.catch((e: unknown) => e)) as SvcWebhookError;
    expect(err).toBeInstanceOf(SvcWebhookError);
    expect(err.code).toBe('body_read_failed');
    expect(err.status).toBe(400);
    // The refusal is the library's own, not a read failure with the reader's error as cause.
    expect(err.cause).toBeUndefined();
  });

  it('pauses the stream when the deadline passes', async () => {
    jest.useFakeTimers();
    const req = request({ 'content-length': '100' });
    const read = readRawBody(req, 1024);
    req.write('{"id":');
    jest.advanceTimersByTime(BODY_TIMEOUT_MS - 1);
    req.write('"x"');
    jest.advanceTimersByTime(1);
    await expect(read).rejects.toMatchObject({ code: 'body_timeout' });
    expect(req.isPaused()).toBe(true);
  });

  describe('a body another part of the app read first', () => {
    it('a Buffer left by express.raw() is the body, as it is; over the limit it is refused', async () => {
      const req = request({ 'content-length': '2' });
      const raw = Buffer.from('{}');
      Object.assign(req, { body: raw });
      expect(await readRawBody(req, 2)).toBe(raw);
      await expect(readRawBody(req, 1)).rejects.toMatchObject({ code: 'body_too_large', status: 413 });
    });

    it('a parsed body, a parser’s mark, or an ended stream: 500 body_already_consumed at once, not a wait for a body that will never come', async () => {
      const parsed = Object.assign(request({ 'content-length': '2' }), { body: { id: 'x' } });
      await expect(readRawBody(parsed, 1024)).rejects.toMatchObject({ code: 'body_already_consumed', status: 500 });
      const marked = Object.assign(request({ 'content-length': '2' }), { _body: true });
      await expect(readRawBody(marked, 1024)).rejects.toMatchObject({ code: 'body_already_consumed' });
      const ended = request({ 'content-length': '2' });
      ended.resume();
      ended.end('{}');
      await new Promise((resolve) => ended.once('end', resolve));
      await expect(readRawBody(ended, 1024)).rejects.toMatchObject({ code: 'body_already_consumed' });
    });

    it('any other body value, an empty object of a class, or a stream no longer readable: 500 body_already_consumed', async () => {
      class Parsed {}
      // A function is no placeholder, even one without keys that claims Object as its constructor.
      const keyless = Object.defineProperty(() => undefined, 'constructor', { value: Object });
      for (const body of [null, new Parsed(), Object.create(null) as object, 'text', [], keyless]) {
        const req = Object.assign(request({ 'content-length': '2' }), { body });
        const read = readRawBody(req, 1024);
        // The stream does hold a body: only the refusal tells that it was not read.
        req.end('{}');
        await expect(read).rejects.toMatchObject({ code: 'body_already_consumed', status: 500 });
      }
      const closed = request({ 'content-length': '2' });
      closed.destroy();
      await expect(readRawBody(closed, 1024)).rejects.toMatchObject({ code: 'body_already_consumed' });
    });

    it("Express 4's empty placeholder ({} before any parser ran) is no parsed body: the stream is read", async () => {
      const req = Object.assign(request({ 'content-length': '2' }), { body: {} });
      const read = readRawBody(req, 1024);
      req.end('{}');
      expect((await read).toString()).toBe('{}');
    });
  });
});
