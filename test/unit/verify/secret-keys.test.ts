import { createHmac } from 'node:crypto';
import { mac } from '../../../src/verify/mac';
import { secretKeys, SECRET_MAX_LENGTH, SECRET_MIN_LENGTH } from '../../../src/verify/secret-keys';

describe('the secret option', () => {
  it('takes secrets of 16 to 256 characters, one or several', () => {
    expect([SECRET_MIN_LENGTH, SECRET_MAX_LENGTH]).toEqual([16, 256]);
    expect(secretKeys('s'.repeat(16))).toHaveLength(1);
    expect(secretKeys('s'.repeat(256))).toHaveLength(1);
    expect(secretKeys(['a'.repeat(16), 'b'.repeat(256)])).toHaveLength(2);
  });

  it.each([
    ['15 characters', 's'.repeat(15), RangeError],
    ['257 characters', 's'.repeat(257), RangeError],
    ['an empty list', [], TypeError],
    // oxlint-disable-next-line no-loss-of-precision -- an unsafe integer is the bad input here
    ['a number', 12345678901234567, TypeError],
    ['a list holding a number', ['s'.repeat(16), 7], TypeError],
    ['undefined', undefined, TypeError],
  ])('refuses %s at setup', (_what, secret, type) => {
    expect(() => secretKeys(secret)).toThrow(type);
  });

  it("signs with the secret's UTF-8 bytes", async () => {
    const secret = 'sécret-with-ünïcode';
    const keys = secretKeys(secret);
    const claimed = createHmac('sha256', Buffer.from(secret, 'utf8')).update('ab').digest();
    expect(await mac().signedByAny(keys, claimed, ['a', Buffer.from('b')])).toBe(true);
    // The Latin-1 bytes of the same text are another key.
    const latin1 = createHmac('sha256', Buffer.from(secret, 'latin1')).update('ab').digest();
    expect(await mac().signedByAny(keys, latin1, ['a', Buffer.from('b')])).toBe(false);
  });
});
