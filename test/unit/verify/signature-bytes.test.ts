import fc from 'fast-check';
import { hexBytes, readBotSignature } from '../../../src/verify/verify-signature';

describe('the MAC a signature header claims, as bytes', () => {
  it('is the hex text’s bytes, in either letter case', () => {
    expect(Array.from(hexBytes('00ff10Ab'))).toEqual([0x00, 0xff, 0x10, 0xab]);
    expect(Array.from(hexBytes('0123456789abcdefABCDEF'))).toEqual([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xab, 0xcd, 0xef]);
    expect(hexBytes('').length).toBe(0);
  });

  it('agrees with Node’s hex decoding for any 32 bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (mac) => {
        const hex = Buffer.from(mac).toString('hex');
        expect(Array.from(hexBytes(hex))).toEqual(Array.from(mac));
        expect(Array.from(readBotSignature({ 'x-svc-signature': `sha256=${hex.toUpperCase()}` }))).toEqual(Array.from(mac));
      }),
    );
  });
});
