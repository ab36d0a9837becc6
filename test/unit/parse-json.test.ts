import { SvcWebhookError } from '../../src';
import { parseJson } from '../../src/parse/parse-json';

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
