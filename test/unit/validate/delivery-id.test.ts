import { canonicalDeliveryId } from '../../../src/validate/delivery-checks';

describe('the canonical form of a delivery id', () => {
  const upper = '0F8FAD5B-D9CB-469F-A165-70867728950E';

  it('is a UUID in lower case, however it was spelled', () => {
    expect(canonicalDeliveryId(upper)).toBe(upper.toLowerCase());
    expect(canonicalDeliveryId(upper.toLowerCase())).toBe(upper.toLowerCase());
  });

  it.each([
    ['a UUID with text before it', `X${upper}`],
    ['a UUID with text after it', `${upper}X`],
    ['36 characters that are not a UUID', 'X'.repeat(36)],
    ['any other id', 'Delivery-42'],
  ])('is %s exactly as sent: ids that are not UUIDs differ by case', (_what, id) => {
    expect(canonicalDeliveryId(id)).toBe(id);
  });
});
