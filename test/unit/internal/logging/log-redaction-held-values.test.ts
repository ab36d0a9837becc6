import { REDACTED, TOO_DEEP, redactingLogOptions } from '../../../../src/internal/logging/log-redaction';
import { nested, unnested } from './nested-values';

const SECRET = 'board-secret-0123456789abcdef';
const { formatters } = redactingLogOptions([SECRET]);
const line = (fields: object) => formatters.log(fields) as Record<string, unknown>;

/** The value logged at `levels` levels below a line's field, as the line shows it. */
const shownAt = (value: unknown, levels: number): unknown => unnested(line({ deep: nested(value, levels) }).deep, levels);

describe('the depth limit, for values that hold their content elsewhere than in own fields', () => {
  it("counts a Map's entries one level below the Map", () => {
    const map = () => new Map([['entry', { token: 't' }]]);
    expect(shownAt(map(), 8)).toEqual({ entry: { token: REDACTED } });
    expect(shownAt(map(), 9)).toEqual({ entry: TOO_DEEP });
  });

  // A subclass (a framework's) can answer anything for them; the limit holds whatever they hold.
  it("counts a fetch Request's URL one level below the request, and its headers' entries one more", () => {
    const request = () =>
      Object.defineProperties(new Request('https://example.com/', { method: 'POST' }), {
        url: { value: { token: 't' } },
        headers: { value: new Map([['entry', { token: 't' }]]) },
      });
    expect(shownAt(request(), 7)).toEqual({ method: 'POST', url: { token: REDACTED }, headers: { entry: { token: REDACTED } } });
    expect(shownAt(request(), 8)).toEqual({ method: 'POST', url: { token: REDACTED }, headers: { entry: TOO_DEEP } });
    expect(shownAt(request(), 9)).toEqual({ method: 'POST', url: TOO_DEEP, headers: { entry: TOO_DEEP } });
  });

  it("counts a fetch Response's headers one level below the response, and their entries one more", () => {
    const response = () => Object.defineProperty(new Response(null, { status: 202 }), 'headers', { value: new Map([['entry', { token: 't' }]]) });
    expect(shownAt(response(), 7)).toEqual({ status: 202, headers: { entry: { token: REDACTED } } });
    expect(shownAt(response(), 8)).toEqual({ status: 202, headers: { entry: TOO_DEEP } });
  });
});

describe("on a runtime without fetch's Headers, Request and Response", () => {
  const NAMES = ['Headers', 'Request', 'Response'] as const;
  const saved = new Map<string, PropertyDescriptor | undefined>();
  beforeEach(() => {
    for (const name of NAMES) {
      saved.set(name, Object.getOwnPropertyDescriptor(globalThis, name));
      Object.defineProperty(globalThis, name, { value: undefined, configurable: true, writable: true });
    }
  });
  afterEach(() => {
    for (const name of NAMES) {
      const descriptor = saved.get(name);
      if (descriptor === undefined) delete (globalThis as Record<string, unknown>)[name];
      else Object.defineProperty(globalThis, name, descriptor);
    }
  });

  it.each(NAMES)('writes an object that names itself %s by its own fields, scrubbed', (tag) => {
    const named = { [Symbol.toStringTag]: tag, said: SECRET, kept: 'kept' };
    expect(line({ named }).named).toEqual({ said: REDACTED, kept: 'kept' });
  });
});
