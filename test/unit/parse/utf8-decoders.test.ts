import * as nodeBuffer from 'node:buffer';
import fc from 'fast-check';
import { nodeUtf8Decoder, webUtf8Decoder, type Utf8Decoder } from '../../../src/parse/parse-json';

const bytes = (...b: number[]) => Uint8Array.from(b);
const utf8 = (text: string) => new TextEncoder().encode(text);

describe.each<[string, () => Utf8Decoder]>([
  ['Node’s decoder (node:buffer)', () => nodeUtf8Decoder(nodeBuffer)],
  ['the decoder where there is no Buffer (TextDecoder)', () => webUtf8Decoder()],
])('%s', (_name, make) => {
  const decode = make();

  it.each([
    ['ASCII', '{"a":1}'],
    ['accents, CJK and emoji', '{"name":"Jürgen café 漢字 🚀"}'],
    ['a large non-ASCII body', `{"t":"${'données 漢字 '.repeat(3000)}"}`],
  ])('decodes %s as UTF-8', (_what, text) => {
    expect(decode(utf8(text))).toBe(text);
  });

  it('decodes a plain Uint8Array view from its own first byte', () => {
    const whole = utf8('xx{"é":1}yy');
    expect(decode(whole.subarray(2, whole.length - 2))).toBe('{"é":1}');
  });

  it('keeps a byte order mark as a character, as Node does (JSON.parse then refuses it)', () => {
    expect(decode(bytes(0xef, 0xbb, 0xbf, 0x7b, 0x7d))).toBe('\ufeff{}');
  });

  it.each([
    ['a lone continuation byte', bytes(0x7b, 0x80, 0x7d)],
    ['a truncated two-byte sequence', bytes(0x7b, 0xc3)],
    ['an overlong encoding of "/"', bytes(0xc0, 0xaf)],
    ['a UTF-16 surrogate encoded as UTF-8', bytes(0xed, 0xa0, 0x80)],
    ['0xff', bytes(0xff)],
  ])('refuses %s with invalid_utf8 (400)', (_what, body) => {
    expect(() => decode(body)).toThrow(expect.objectContaining({ code: 'invalid_utf8', status: 400 }));
  });

  it('gives the text Node’s decoder gives, or refuses the bytes it refuses, for any bytes', () => {
    const node = nodeUtf8Decoder(nodeBuffer);
    const outcome = (d: Utf8Decoder, body: Uint8Array) => {
      try {
        return d(body);
      } catch (err) {
        return (err as { code: string }).code;
      }
    };
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (body) => {
        expect(outcome(decode, body)).toBe(outcome(node, body));
      }),
      { numRuns: 500 },
    );
  });
});
