import { SvcWebhookError } from '../../../src';
import { parseJson } from '../../../src/parse/parse-json';

const code = (text: string) => {
  try {
    parseJson(Buffer.from(text));
    return 'ok';
  } catch (err) {
    return (err as SvcWebhookError).code;
  }
};

describe('parseJson', () => {
  it('parses JSON, including values that merely mention forbidden names', () => {
    expect(parseJson(Buffer.from('{"text":"the constructor of __proto__","n":[1,{"a":"\\u00e9"}]}'))).toEqual({
      text: 'the constructor of __proto__',
      n: [1, { a: 'é' }],
    });
  });

  it.each([
    ['invalid JSON', '{"a":', 'invalid_json'],
    ['an empty body', '', 'invalid_json'],
    ['a top-level __proto__ key', '{"__proto__":{"x":1}}', 'forbidden_key'],
    ['a nested constructor key', '{"a":[{"b":{"constructor":{"prototype":{}}}}]}', 'forbidden_key'],
    ['an escaped __proto__ key', '{"\\u005f_proto__":{}}', 'forbidden_key'],
  ])('refuses %s', (_what, text, expected) => {
    expect(code(text)).toBe(expected);
  });
});

describe('parseJson when another module made keys of Object.prototype enumerable', () => {
  const original = Object.getOwnPropertyDescriptor(Object.prototype, 'constructor')!;
  beforeEach(() => Object.defineProperty(Object.prototype, 'constructor', { ...original, enumerable: true }));
  afterEach(() => Object.defineProperty(Object.prototype, 'constructor', original));

  it("looks only at the body's own keys: an inherited key is not the body's", () => {
    expect(parseJson(Buffer.from('{"a":{"b":[{"c":1}]}}'))).toEqual({ a: { b: [{ c: 1 }] } });
  });

  it('still refuses a forbidden key of the body itself', () => {
    expect(code('{"a":{"constructor":{}}}')).toBe('forbidden_key');
    expect(code('{"a":[{"__proto__":{}}]}')).toBe('forbidden_key');
  });
});

describe('parseJson of a body that is not JSON', () => {
  it("refuses it as invalid_json (400), with the parser's error as cause", () => {
    let caught: unknown;
    try {
      parseJson(Buffer.from('{"a":'));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SvcWebhookError);
    expect([(caught as SvcWebhookError).code, (caught as SvcWebhookError).status]).toEqual(['invalid_json', 400]);
    expect((caught as SvcWebhookError).cause).toBeInstanceOf(SyntaxError);
  });
});
