import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SvcClient, SvcClientError } from '../../src/client';
import { MAX_ANSWER_BYTES } from '../../src/client/bounded-text';

const ANSWER_BYTES = 4 * MAX_ANSWER_BYTES;
const CHUNK = Buffer.alloc(64 * 1024, 'a');

interface Answerer {
  readonly baseUrl: string;
  /** Bytes the server had handed to the socket when the client went away. */
  written(): Promise<number>;
  close(): Promise<void>;
}

/**
 * A server answering `status` with a valid JSON body of ANSWER_BYTES, written as fast as the client
 * reads it; with `declare`, its Content-Length is sent first.
 */
async function hugeAnswer(status: number, declare: boolean): Promise<Answerer> {
  let finished: (bytes: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (finished = resolve));
  const server = http.createServer((_req, res) => {
    let written = 0;
    res.statusCode = status;
    res.setHeader('content-type', 'application/json');
    if (declare) res.setHeader('content-length', ANSWER_BYTES);
    res.on('close', () => finished(written));
    const write = (): void => {
      while (written < ANSWER_BYTES) {
        const piece =
          written === 0
            ? Buffer.from('{"pad":"')
            : written + CHUNK.length + 2 >= ANSWER_BYTES
              ? Buffer.from('a'.repeat(ANSWER_BYTES - written - 2) + '"}')
              : CHUNK;
        written += piece.length;
        if (!res.write(piece)) return void res.once('drain', write);
      }
      res.end();
    };
    write();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    written: () => done,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function failure(promise: Promise<unknown>): Promise<SvcClientError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof SvcClientError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('SvcClient reads at most MAX_ANSWER_BYTES of an answer', () => {
  let svc: Answerer | undefined;
  afterEach(() => svc?.close());

  it.each([
    ['streamed without a length', false],
    ['with a Content-Length over the bound', true],
  ])('a 2xx answer %s fails with invalid_response, and the rest is not read', async (_name, declare) => {
    svc = await hugeAnswer(200, declare);
    const err = await failure(new SvcClient({ baseUrl: svc.baseUrl, timeoutMs: 10_000 }).version());
    expect(err).toMatchObject({ code: 'invalid_response', status: 200 });
    // The server stopped when the client went away: well short of the whole answer.
    expect(await svc.written()).toBeLessThan(ANSWER_BYTES / 2);
  });

  it('an oversized error answer keeps its status: svc_api_error 500, the body not shown', async () => {
    svc = await hugeAnswer(500, false);
    const err = await failure(new SvcClient({ baseUrl: svc.baseUrl, timeoutMs: 10_000 }).version());
    expect(err).toMatchObject({ code: 'svc_api_error', status: 500 });
    expect(err.message).not.toContain('aaaa');
  });
});
