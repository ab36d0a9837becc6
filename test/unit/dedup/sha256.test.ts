import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { sha256Hex, sha256Words } from '../../../src/dedup/sha256';
import { nodeHashWords, portableHashWords } from '../../../src/dedup/id-table';
import * as nodeCrypto from 'node:crypto';

const hex = (words: Uint32Array) => Array.from(words, (w) => w.toString(16).padStart(8, '0')).join('');

describe('sha256Words, the portable SHA-256 of a string’s UTF-8 bytes', () => {
  it.each([
    ['the empty string', '', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['"abc"', 'abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    [
      'the two-block test vector',
      'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    ],
  ])('gives the FIPS 180-4 digest of %s', (_what, text, digest) => {
    expect(hex(sha256Words(text))).toBe(digest);
  });

  it.each([55, 56, 63, 64, 65, 119, 120, 128, 1000])('pads a message of %i bytes as node:crypto does', (length) => {
    const text = 'x'.repeat(length);
    expect(hex(sha256Words(text))).toBe(createHash('sha256').update(text).digest('hex'));
  });

  it('agrees with node:crypto on any text, non-ASCII and surrogate pairs included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 150 }), (text) => {
        expect(hex(sha256Words(text))).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      }),
      { numRuns: 300 },
    );
  });
});

describe('the words of an id that is not a UUID, without node:crypto', () => {
  it('are the same four words node:crypto gives', () => {
    const node = nodeHashWords(nodeCrypto);
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (id) => {
        const [a, b] = [new Uint32Array(4), new Uint32Array(4)];
        node(id, a);
        portableHashWords(id, b);
        expect(Array.from(b)).toEqual(Array.from(a));
      }),
      { numRuns: 300 },
    );
  });

  it('are the first 16 bytes of the digest, each word read little-endian', () => {
    const out = new Uint32Array(4);
    portableHashWords('abc', out);
    // SHA-256("abc") begins ba7816bf 8f01cfea 414140de 5dae2223.
    expect(Array.from(out, (w) => w.toString(16).padStart(8, '0'))).toEqual(['bf1678ba', 'eacf018f', 'de404141', '2322ae5d']);
  });
});

describe('sha256Hex, the digest as node:crypto writes it in hex', () => {
  it('agrees with node:crypto on any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      }),
      { numRuns: 200 },
    );
    // A digest whose words begin with zeros keeps them: "abc" is ba7816bf…, "" ends in …7852b855.
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
