import { SvcWebhookError } from '../../../src';
import { readWebBody } from '../../../src/capture/read-web-body';

const URL = 'https://receiver.example/svc';

/** A request whose body arrives as the given chunks, then ends (or, with `hang`, never ends). */
function streamed(chunks: string[], options: { hang?: boolean; headers?: Record<string, string> } = {}) {
  let cancelled: unknown;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      if (options.hang !== true) controller.close();
    },
    cancel(reason) {
      cancelled = reason;
    },
  });
  const request = new Request(URL, { method: 'POST', body, headers: options.headers, duplex: 'half' } as RequestInit);
  return { request, cancelled: () => cancelled };
}

async function refusal(reading: Promise<unknown>): Promise<SvcWebhookError> {
  const err = await reading.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SvcWebhookError);
  return err as SvcWebhookError;
}

describe('reading the body of a Fetch Request', () => {
  it('is the exact bytes, joined from its chunks', async () => {
    const { request } = streamed(['{"a":', '"é"}']);
    expect((await readWebBody(request, 100)).toString()).toBe('{"a":"é"}');
  });

  it('is empty for a request without a body', async () => {
    const body = await readWebBody(new Request(URL, { method: 'POST' }), 100);
    expect(Buffer.isBuffer(body)).toBe(true);
    expect(body.length).toBe(0);
  });

  it('takes a body exactly as long as the limit', async () => {
    const { request } = streamed(['12345', '67890']);
    expect((await readWebBody(request, 10)).length).toBe(10);
  });

  it('refuses a streamed body as soon as it passes the limit, and cancels the rest', async () => {
    const { request, cancelled } = streamed(['12345', '678901', 'more'], { hang: true });
    const err = await refusal(readWebBody(request, 10));
    expect([err.code, err.status]).toEqual(['body_too_large', 413]);
    expect(cancelled()).toBe(err);
  });

  it('takes a body whose declared length is the limit', async () => {
    const { request } = streamed(['12345', '67890'], { headers: { 'content-length': '10' } });
    expect((await readWebBody(request, 10)).length).toBe(10);
  });

  it('refuses an oversize declared in Content-Length before reading', async () => {
    const { request, cancelled } = streamed(['{}'], { headers: { 'content-length': '11' } });
    expect((await refusal(readWebBody(request, 10))).code).toBe('body_too_large');
    expect(request.bodyUsed).toBe(false);
    expect(cancelled()).toBeUndefined();
  });

  it('refuses a body that another reader already has', async () => {
    const { request } = streamed(['{}']);
    request.body!.getReader();
    expect((await refusal(readWebBody(request, 10))).code).toBe('body_already_consumed');
  });

  it('refuses a body whose stream fails as body_read_failed, the failure as cause', async () => {
    const failure = new Error('connection reset');
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(failure);
      },
    });
    const err = await refusal(readWebBody(new Request(URL, { method: 'POST', body, duplex: 'half' } as RequestInit), 10));
    expect([err.code, err.cause]).toEqual(['body_read_failed', failure]);
  });

  describe('on a clock', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it("refuses a body still arriving after the sender's 10 s, and cancels it", async () => {
      const { request, cancelled } = streamed(['{"a":'], { hang: true });
      const reading = refusal(readWebBody(request, 100));
      await jest.advanceTimersByTimeAsync(9_999);
      expect(cancelled()).toBeUndefined();
      await jest.advanceTimersByTimeAsync(1);
      const err = await reading;
      expect([err.code, err.status]).toEqual(['body_timeout', 408]);
      expect(cancelled()).toBe(err);
    });

    it('leaves no timer behind once the body is read', async () => {
      const { request } = streamed(['{}']);
      await readWebBody(request, 100);
      expect(jest.getTimerCount()).toBe(0);
    });
  });
});
