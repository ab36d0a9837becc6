import { bodyBoardId, scannedBoardId } from '../../../src/verify/claimed-board';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('the claimed board, read from a plain Uint8Array (a body where there is no Buffer)', () => {
  it.each([
    ['{"id":"1","board":{"id":"A"}}', 'A'],
    ['{"x":"\\"board\\":{\\"id\\":\\"B\\"}","board":{"id":"A"}}', 'A'],
    ['{"x":{"board":{"id":"B"}},"board":{"id":"A"}}', 'A'],
    ['{"boards":{"id":"B"},"board":{"id":"A"}}', 'A'],
    ['{"boar":{"id":"B"}}', undefined],
    ['{"x":"é漢🚀","board":{"id":"A"}}', 'A'],
  ])('scans %s -> %s', (text, expected) => {
    expect(scannedBoardId(bytes(text))).toBe(expected);
  });

  it('reads a view into a larger buffer from its own first byte', () => {
    const whole = bytes('{"board":{"id":"B"}}{"board":{"id":"A"}}');
    expect(scannedBoardId(whole.subarray(20))).toBe('A');
  });

  it('reads a key that starts within the first 4 KB, not one after', () => {
    const pad = (n: number) => `{"p":"${'x'.repeat(n)}",`;
    const start = pad(0).length;
    // The key's opening quote at byte 4095, its id past the 4 KB.
    expect(scannedBoardId(bytes(`${pad(4095 - start)}"board":{"id":"A"}}`))).toBe('A');
    expect(scannedBoardId(bytes(`${pad(4096 - start)}"board":{"id":"A"}}`))).toBeUndefined();
  });

  it('reads an id of 200 characters with spacing, up to 256 bytes from the key', () => {
    const id = 'b'.repeat(200);
    // "board" (7) + 40 spaces + :{"id":" (8) + the id (200) + the closing quote: 256 bytes.
    expect(scannedBoardId(bytes(`{"board"${' '.repeat(40)}:{"id":"${id}"}}`))).toBe(id);
    expect(scannedBoardId(bytes(`{"board"${' '.repeat(41)}:{"id":"${id}"}}`))).toBeUndefined();
  });

  it('stops at the end of a body cut inside the key or the id', () => {
    expect(scannedBoardId(bytes('{"boa'))).toBeUndefined();
    expect(scannedBoardId(bytes('{"board":{"id":"A'))).toBeUndefined();
  });

  it('parses the whole body when the scan finds nothing, bytes that are not UTF-8 replaced', () => {
    expect(bodyBoardId(Uint8Array.from([...bytes('{"x":"'), 0xff, ...bytes('","board":{"id":"A"}}')]))).toBe('A');
    expect(bodyBoardId(bytes('{"board":{"id":"A"}}'))).toBe('A');
  });

  it('reads no board from a body that begins with a byte order mark, as JSON.parse reads none', () => {
    expect(bodyBoardId(Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes('{"board":{"id":"A"}}')]))).toBeUndefined();
  });
});
