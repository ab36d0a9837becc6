import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import getRawBody from 'raw-body';
import { SvcWebhookError } from '../../../src';
import { readRawBody } from '../../../src/capture/read-raw-body';

jest.mock('raw-body', () => ({ __esModule: true, default: jest.fn() }));
const reader = getRawBody as unknown as jest.Mock;

function request(): IncomingMessage {
  return Object.assign(new PassThrough(), { headers: {} }) as unknown as IncomingMessage;
}

async function failure(thrown: unknown): Promise<SvcWebhookError> {
  jest.useFakeTimers();
  reader.mockReturnValueOnce(Promise.reject(thrown));
  const read = readRawBody(request(), 1024).catch((e: unknown) => e);
  // Settle the reader's rejection first; only then would the body deadline pass.
  for (let i = 0; i < 10; i++) await Promise.resolve();
  jest.advanceTimersByTime(10_000);
  return (await read) as SvcWebhookError;
}

describe('readRawBody when the stream reader fails with something that is not an error object', () => {
  afterEach(() => jest.useRealTimers());

  it('a rejection with null is a read failure (400 body_read_failed), at once', async () => {
    const err = await failure(null);
    expect(err).toBeInstanceOf(SvcWebhookError);
    expect(err.code).toBe('body_read_failed');
    expect(err.cause).toBeNull();
  });

  it("a rejection with a function is a read failure: only an object's `type` names the reader's error", async () => {
    const thrown = Object.assign(() => undefined, { type: 'entity.too.large' });
    const err = await failure(thrown);
    expect(err.code).toBe('body_read_failed');
    expect(err.status).toBe(400);
    expect(err.cause).toBe(thrown);
  });

  it("the reader's size error is 413 body_too_large", async () => {
    const err = await failure(Object.assign(new Error('too large'), { type: 'entity.too.large' }));
    expect(err.code).toBe('body_too_large');
    expect(err.status).toBe(413);
  });
});
