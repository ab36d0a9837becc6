import { parseJson } from '../../../src/parse/parse-json';

/** A JSON document of about `bytes` bytes whose one string is `unit` repeated. */
function document(unit: string, bytes: number): { text: string; value: unknown } {
  const value = { id: 'x', text: unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit))) };
  return { text: JSON.stringify(value), value };
}

describe('parseJson decoding of large bodies', () => {
  it.each([
    ['ASCII', 'plain text '],
    ['accented Latin', 'Jürgen café — “quoted” '],
    ['CJK and emoji', '漢字かな 🚀😀 '],
    ['one late non-ASCII character', 'x'],
  ])('parses %s text of 20 KB and 300 KB exactly as JSON.parse of the UTF-8 text', (_what, unit) => {
    for (const bytes of [20 * 1024, 300 * 1024]) {
      const { text } = document(unit, bytes);
      const body = Buffer.from(unit === 'x' ? text.replace(/x"}$/, 'é"}') : text);
      expect(parseJson(body)).toEqual(JSON.parse(body.toString('utf8')));
    }
  });

  it.each([
    ['a lone continuation byte in a small body', 1024, [0x80]],
    ['a truncated two-byte sequence in a large body', 40 * 1024, [0xc3]],
    ['an overlong encoding of "/"', 1024, [0xc0, 0xaf]],
    ['a UTF-16 surrogate encoded as UTF-8', 1024, [0xed, 0xa0, 0x80]],
  ])('refuses invalid UTF-8 (%s) with invalid_utf8, never decoding it with replacements', (_what, bytes, bad) => {
    const body = Buffer.from(document('données ', bytes).text);
    const corrupt = Buffer.concat([body.subarray(0, 20), Buffer.from(bad), body.subarray(20)]);
    expect(() => parseJson(corrupt)).toThrow(expect.objectContaining({ code: 'invalid_utf8', status: 400 }));
  });
});

describe('parseJson of a small body with non-ASCII text', () => {
  it('decodes it as UTF-8', () => {
    expect(parseJson(Buffer.from('{"name":"Jürgen café 漢字 🚀"}'))).toEqual({ name: 'Jürgen café 漢字 🚀' });
  });
});
