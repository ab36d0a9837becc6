import { isSvcResourceId, isUuid } from '../../../../src/internal/checks/value-checks';

const ID = '88f7b448-895e-49f0-9eca-ab4ee416bab1';

describe('isUuid', () => {
  it('takes the 8-4-4-4-12 form of hexadecimal digits, in either case', () => {
    expect([isUuid(ID), isUuid(ID.toUpperCase())]).toEqual([true, true]);
  });

  it.each(['', 'constructor', ID.replace(/-/g, ''), `{${ID}}`, `${ID} `, ` ${ID}`, `${ID}\n`, ID.replace('8', 'g'), ID.slice(1), `urn:uuid:${ID}`])(
    'refuses %p',
    (id) => {
      expect(isUuid(id)).toBe(false);
    },
  );
});

describe('isSvcResourceId (what a secret resolver is asked about)', () => {
  it('is a UUID in lower case, as svc writes ids', () => {
    expect(isSvcResourceId(ID)).toBe(true);
    expect(isSvcResourceId(ID.toUpperCase())).toBe(false);
    expect(isSvcResourceId(ID.replace('f', 'F'))).toBe(false);
    expect(isSvcResourceId('__proto__')).toBe(false);
  });
});
