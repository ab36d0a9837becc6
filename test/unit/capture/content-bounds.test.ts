import { SvcWebhookError } from '../../../src';
import { alreadyConsumed, bodyTimeout, declaredLength, joinBody, readFailed, tooLarge } from '../../../src/capture/body-bounds';
import { checkContentHeaders } from '../../../src/capture/body-bounds';
import { headerText, headerValues } from '../../../src/internal/request/headers';

/** The SvcWebhookError `run` throws (fails the test when it throws nothing or something else). */
function thrown(run: () => unknown): SvcWebhookError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SvcWebhookError);
    return err as SvcWebhookError;
  }
  throw new Error('expected a SvcWebhookError');
}

describe('the declared length (Content-Length)', () => {
  it.each([
    ['120', 120],
    ['0', 0],
    [undefined, undefined],
    [null, undefined],
    ['abc', undefined],
  ])('%p -> %p', (text, length) => {
    expect(declaredLength(text)).toBe(length);
  });
});

describe('the received body', () => {
  const chunks = [Buffer.from('{"a":'), Buffer.from('1}')];

  it('is the chunks joined, when as long as declared or when nothing was declared', () => {
    expect(joinBody(chunks, 7, 7).toString()).toBe('{"a":1}');
    expect(joinBody(chunks, 7, undefined).toString()).toBe('{"a":1}');
    expect(joinBody([Buffer.from('{}')], 2, 2).toString()).toBe('{}');
  });

  it('is refused as body_read_failed (400) when shorter or longer than declared, with the reason as cause', () => {
    for (const declared of [6, 8]) {
      const err = thrown(() => joinBody(chunks, 7, declared));
      expect([err.code, err.status]).toEqual(['body_read_failed', 400]);
      expect(err.cause).toBeInstanceOf(Error);
    }
  });
});

describe('the refusals of a body', () => {
  it('each have their code and status', () => {
    const cause = new Error('socket hang up');
    expect([tooLarge(10).code, tooLarge(10).status]).toEqual(['body_too_large', 413]);
    expect([readFailed(cause).code, readFailed(cause).status, readFailed(cause).cause]).toEqual(['body_read_failed', 400, cause]);
    expect([bodyTimeout().code, bodyTimeout().status]).toEqual(['body_timeout', 408]);
    expect([alreadyConsumed('x').code, alreadyConsumed('x').status]).toEqual(['body_already_consumed', 500]);
  });
});

describe('the content headers', () => {
  it('accept JSON with parameters, in any case and spacing, without a coding or with "identity"', () => {
    for (const headers of [
      { 'content-type': 'application/json' },
      { 'content-type': 'Application/JSON ; charset=utf-8' },
      { 'content-type': 'application/json', 'content-encoding': ' Identity ' },
    ]) {
      expect(() => checkContentHeaders(headers)).not.toThrow();
    }
  });

  it.each([{}, { 'content-type': 'text/plain' }, { 'content-type': 'application/json-seq' }, { 'content-type': '' }])(
    'refuse a body that is not declared JSON (%p) as unsupported_media_type (415)',
    (headers) => {
      const err = thrown(() => checkContentHeaders(headers));
      expect([err.code, err.status]).toEqual(['unsupported_media_type', 415]);
    },
  );

  it.each(['gzip', 'br', 'identity, gzip'])('refuse any content coding (%s) as content_encoding_unsupported (415)', (coding) => {
    const err = thrown(() => checkContentHeaders({ 'content-type': 'application/json', 'content-encoding': coding }));
    expect([err.code, err.status]).toEqual(['content_encoding_unsupported', 415]);
  });
});

describe('headers given as a plain object', () => {
  it('count every spelling of a name, and numbers as text', () => {
    const headers = { 'Content-Length': 12, 'x-Svc-Delivery': 'a', 'X-SVC-DELIVERY': 'b' };
    expect(headerText(headers, 'content-length')).toBe('12');
    expect(headerValues(headers, 'content-length')).toEqual(['12']);
    expect(headerText(headers, 'x-svc-delivery')).toBe('a, b');
    expect(headerText(headers, 'x-svc-event')).toBeUndefined();
  });

  it("give a header's text as sent, and skip a name whose value is undefined", () => {
    expect(headerText({ 'x-list': 'p,q' }, 'x-list')).toBe('p,q');
    expect(headerValues({ 'x-svc-event': undefined, 'X-Svc-Event': 'a' }, 'x-svc-event')).toEqual(['a']);
    expect(headerText({ 'x-svc-event': undefined }, 'x-svc-event')).toBeUndefined();
  });
});

describe('every value a header was sent with', () => {
  it("comes from a Node request's raw list, where a repeat stays apart", () => {
    const req = { rawHeaders: ['X-Svc-Signature', 'v1=a', 'x-svc-signature', 'v1=b', 'Host', 'h'], headers: { 'x-svc-signature': 'v1=a, v1=b' } };
    expect(headerValues(req, 'x-svc-signature')).toEqual(['v1=a', 'v1=b']);
  });

  it('comes from the headers object of a request whose raw list is empty', () => {
    expect(headerValues({ rawHeaders: [], headers: { 'x-svc-event': 'task.created' } }, 'x-svc-event')).toEqual(['task.created']);
  });

  it('is split at commas in a Fetch Headers and in a bare plain object, which hold repeats joined', () => {
    const fetchHeaders = new Headers([
      ['x-svc-signature', 'v1=a'],
      ['x-svc-signature', 'v1=b'],
    ]);
    expect(headerValues(fetchHeaders, 'x-svc-signature')).toEqual(['v1=a', 'v1=b']);
    expect(headerValues({ headers: fetchHeaders }, 'x-svc-signature')).toEqual(['v1=a', 'v1=b']);
    expect(headerValues({ 'x-svc-signature': 'v1=a, v1=b' }, 'x-svc-signature')).toEqual(['v1=a', 'v1=b']);
  });

  it('is none for a header a Fetch Headers does not have', () => {
    expect(headerValues(new Headers(), 'x-svc-signature')).toEqual([]);
    expect(headerValues({ headers: new Headers() }, 'x-svc-signature')).toEqual([]);
  });
});
