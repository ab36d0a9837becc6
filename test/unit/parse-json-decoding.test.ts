import { parseJson } from '../../src/parse/parse-json';

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

  it('decodes invalid UTF-8 as before, each bad sequence as U+FFFD', () => {
    const { text } = document('données ', 40 * 1024);
    const body = Buffer.from(text);
    const bad = Buffer.concat([body.subarray(0, 100), Buffer.from([0xc3]), body.subarray(100)]);
    expect(parseJson(bad)).toEqual(JSON.parse(bad.toString('utf8')));
  });
});
