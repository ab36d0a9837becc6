import { headerText, headerValues, singleHeader, type HeaderSource } from '../../../../src/internal/request/headers';

/** A Node request as the adapters see it: the raw list as sent, `headers` as Node builds it (lower case). */
function nodeRequest(raw: string[], headers: Record<string, string | string[]>): HeaderSource {
  return { rawHeaders: raw, headers };
}

describe('headerValues: every value a header was sent with', () => {
  describe('of a Node request with a raw list', () => {
    it('takes each value sent under the name, in any case and in order, from the raw list alone', () => {
      const req = nodeRequest(['X-Svc-Event', 'a', 'Host', 'h', 'x-SVC-event', 'b', 'X-Svc-Evens', 'c', 'X-Svc-Events', 'd'], {
        'x-svc-event': 'from headers',
      });
      expect(headerValues(req, 'x-svc-event')).toEqual(['a', 'b']);
    });

    it('keeps a value with a comma whole', () => {
      expect(headerValues(nodeRequest(['X-Svc-Event', 'a, b'], { 'x-svc-event': 'a, b' }), 'x-svc-event')).toEqual(['a, b']);
    });

    it('is none when the raw list does not hold the name', () => {
      expect(headerValues(nodeRequest(['Host', 'h'], { 'x-svc-event': 'a' }), 'x-svc-event')).toEqual([]);
    });
  });

  describe('of a request without a raw list (or an empty one)', () => {
    it('reads its headers object in any case, every spelling, without splitting the values', () => {
      const headers = { 'X-Svc-Event': 'a, b', host: 'h', 'x-svc-evens': 'c', 'x-svc-event': ['d', 'e'], 'X-SVC-EVENT': undefined };
      expect(headerValues({ headers }, 'x-svc-event')).toEqual(['a, b', 'd', 'e']);
      expect(headerValues({ rawHeaders: [], headers }, 'x-svc-event')).toEqual(['a, b', 'd', 'e']);
    });

    it('gives a number as its text', () => {
      expect(headerValues({ headers: { 'content-length': 12 } }, 'content-length')).toEqual(['12']);
    });

    it('reads a Fetch Headers under `headers`, split at commas and trimmed, and none when absent', () => {
      const headers = new Headers([
        ['x-svc-signature', 'v1=a'],
        ['x-svc-signature', ' v1=b '],
      ]);
      expect(headerValues({ headers }, 'x-svc-signature')).toEqual(['v1=a', 'v1=b']);
      expect(headerValues({ headers }, 'x-svc-event')).toEqual([]);
    });

    it('reads the headers object, not the `get` method, of an Express-like request', () => {
      const req = { headers: { 'x-svc-event': 'a' }, get: () => 'from get' };
      expect(headerValues(req as HeaderSource, 'x-svc-event')).toEqual(['a']);
    });
  });

  describe('of a Fetch Headers', () => {
    it('splits the joined text at commas, trimming each part', () => {
      const headers = new Headers([
        ['x-svc-signature', 'v1=a'],
        ['x-svc-signature', 'v1=b'],
      ]);
      expect(headerValues(headers, 'x-svc-signature')).toEqual(['v1=a', 'v1=b']);
    });

    it('gives one value without a comma as it is, and none for an absent name', () => {
      const headers = new Headers({ 'x-svc-event': 'task.created' });
      expect(headerValues(headers, 'x-svc-event')).toEqual(['task.created']);
      expect(headerValues(headers, 'x-svc-delivery')).toEqual([]);
    });
  });

  describe('of a plain header object', () => {
    it('reads every spelling of the name, splitting each value at commas and trimming the parts', () => {
      const headers = { 'X-Svc-Signature': 'v1=a ,v1=b', host: 'h', 'x-svc-signaturf': 'x', 'x-svc-signature': ['v1=c', 'v1=d'] };
      expect(headerValues(headers, 'x-svc-signature')).toEqual(['v1=a', 'v1=b', 'v1=c', 'v1=d']);
    });

    it('gives a value without a comma exactly as it is, a number as its text, and skips an undefined value', () => {
      expect(headerValues({ 'x-svc-event': 'task.created' }, 'x-svc-event')).toEqual(['task.created']);
      expect(headerValues({ 'x-svc-event': ' task.created ' }, 'x-svc-event')).toEqual([' task.created ']);
      expect(headerValues({ 'X-Svc-Timestamp': 1700000000 }, 'x-svc-timestamp')).toEqual(['1700000000']);
      expect(headerValues({ 'x-svc-event': undefined }, 'x-svc-event')).toEqual([]);
    });

    it('reads a header named `headers` as a header, whatever its value', () => {
      expect(headerValues({ headers: 'a', 'x-svc-event': 'b' }, 'headers')).toEqual(['a']);
      expect(headerValues({ headers: null, 'x-svc-event': 'b' } as unknown as HeaderSource, 'x-svc-event')).toEqual(['b']);
    });
  });
});

describe('headerText: a header as one text', () => {
  describe('of a Node request with a raw list', () => {
    it("reads Node's lower-case headers object by the name alone", () => {
      const req = nodeRequest(['Content-Type', 'application/json'], { 'content-type': 'application/json', 'Content-Type': 'text/plain' });
      expect(headerText(req, 'content-type')).toBe('application/json');
      expect(headerText(req, 'content-encoding')).toBeUndefined();
    });

    it('joins a list value with ", "', () => {
      expect(headerText(nodeRequest(['Set-Cookie', 'a', 'Set-Cookie', 'b'], { 'set-cookie': ['a', 'b'] }), 'set-cookie')).toBe('a, b');
    });

    it('gives a number as its text', () => {
      expect(headerText(nodeRequest(['Content-Length', '12'], { 'content-length': 12 } as unknown as Record<string, string>), 'content-length')).toBe('12');
    });
  });

  describe('of a request without a raw list (or an empty one)', () => {
    it('reads a name in any case, as headerValues does, joining every spelling', () => {
      const headers = { 'Content-Type': 'application/json', 'CONTENT-TYPE': 'charset=utf-8', 'Content-Typf': 'x' };
      expect(headerText({ headers }, 'content-type')).toBe('application/json, charset=utf-8');
      expect(headerText({ rawHeaders: [], headers }, 'content-type')).toBe('application/json, charset=utf-8');
      expect(headerValues({ headers }, 'content-type')).toEqual(['application/json', 'charset=utf-8']);
      expect(headerText({ headers }, 'content-encoding')).toBeUndefined();
    });

    it('gives each value as sent, not split at its commas', () => {
      expect(headerText({ headers: { Accept: 'a,b' } }, 'accept')).toBe('a,b');
    });

    it('reads a Fetch Headers under `headers`', () => {
      const headers = new Headers({ 'content-type': 'application/json' });
      expect(headerText({ headers }, 'content-type')).toBe('application/json');
      expect(headerText({ headers }, 'content-encoding')).toBeUndefined();
    });
  });

  describe('of a Fetch Headers', () => {
    it('is its joined text, or undefined when absent', () => {
      const headers = new Headers([
        ['accept', 'a'],
        ['accept', 'b'],
      ]);
      expect(headerText(headers, 'accept')).toBe('a, b');
      expect(headerText(headers, 'content-type')).toBeUndefined();
    });
  });

  describe('of a plain header object', () => {
    it('is the value of every spelling, as sent (not split), joined with ", "', () => {
      expect(headerText({ 'Content-Type': 'a,b', 'content-type': ['c', 'd'], 'content-typf': 'e' }, 'content-type')).toBe('a,b, c, d');
      expect(headerText({ 'X-List': 'p,q' }, 'x-list')).toBe('p,q');
    });

    it('is undefined when no spelling has a value', () => {
      expect(headerText({ host: 'h' }, 'content-type')).toBeUndefined();
      expect(headerText({ 'content-type': undefined }, 'content-type')).toBeUndefined();
    });

    it('reads a header named `headers` as a header, whatever its value', () => {
      expect(headerText({ headers: 'a', 'Content-Type': 'b' }, 'content-type')).toBe('b');
      expect(headerText({ headers: 'a' }, 'headers')).toBe('a');
      expect(headerText({ headers: null, 'Content-Type': 'b' } as unknown as HeaderSource, 'content-type')).toBe('b');
    });
  });
});

describe('singleHeader: a header that must be sent once', () => {
  it('is its value when sent once', () => {
    expect(singleHeader({ 'x-svc-delivery': 'd1' }, 'x-svc-delivery')).toBe('d1');
  });

  it('is undefined when absent or repeated', () => {
    expect(singleHeader({ host: 'h' }, 'x-svc-delivery')).toBeUndefined();
    expect(singleHeader(nodeRequest(['X-Svc-Delivery', 'd1', 'X-Svc-Delivery', 'd2'], { 'x-svc-delivery': 'd1, d2' }), 'x-svc-delivery')).toBeUndefined();
  });
});
