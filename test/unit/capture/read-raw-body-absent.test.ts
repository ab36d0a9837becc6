import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { readRawBody } from '../../../src/capture/read-raw-body-absent';

describe('readRawBody of the Fetch build (no Node streams to read with)', () => {
  it('refuses a Node request with a TypeError, leaving its body unread', async () => {
    const req = Object.assign(new PassThrough(), { headers: { 'content-length': '2' } });
    req.end('{}');
    await expect(readRawBody(req as unknown as IncomingMessage, 1024)).rejects.toBeInstanceOf(TypeError);
    expect(req.readableLength).toBe(2);
  });
});
