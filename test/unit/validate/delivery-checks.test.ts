import { SvcWebhookError } from '../../../src/errors';
import { checkHeaderMatches, isObject, malformed } from '../../../src/validate/delivery-checks';

const EVENT = { name: 'x-svc-event', shown: 'X-Svc-Event', code: 'event_type_mismatch' } as const;
const DELIVERY = { name: 'x-svc-delivery', shown: 'X-Svc-Delivery', code: 'delivery_id_mismatch' } as const;

function codeOf(run: () => void): string | undefined {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SvcWebhookError);
    return (err as SvcWebhookError).code;
  }
  return undefined;
}

describe('what the checks of both webhooks share', () => {
  it('an object is a plain object or class instance, not an array or null', () => {
    expect([{}, { a: 1 }, new Date(0)].map(isObject)).toEqual([true, true, true]);
    expect([[], null, undefined, 'x', 1, () => undefined].map(isObject)).toEqual([false, false, false, false, false, false]);
  });

  it('a malformed delivery is 400 schema_violation with no schema problems listed', () => {
    const error = malformed('bad');
    expect([error.code, error.status, error.details]).toEqual(['schema_violation', 400, []]);
  });

  describe('a header that repeats the signed body', () => {
    it('may be left out', () => {
      expect(codeOf(() => checkHeaderMatches({ headers: {} }, EVENT, 'ping'))).toBeUndefined();
    });

    it('must equal the body value when sent', () => {
      expect(codeOf(() => checkHeaderMatches({ headers: { 'x-svc-event': 'ping' } }, EVENT, 'ping'))).toBeUndefined();
      expect(codeOf(() => checkHeaderMatches({ headers: { 'x-svc-event': 'Ping' } }, EVENT, 'ping'))).toBe('event_type_mismatch');
    });

    it('is refused when sent twice, even with the matching value first', () => {
      const headers = { headers: {}, rawHeaders: ['X-Svc-Event', 'ping', 'X-Svc-Event', 'ping'] };
      expect(codeOf(() => checkHeaderMatches(headers, EVENT, 'ping'))).toBe('event_type_mismatch');
    });

    it('is compared in the canonical form given for both', () => {
      const lower = (v: string) => v.toLowerCase();
      expect(codeOf(() => checkHeaderMatches({ headers: { 'x-svc-delivery': 'ABC' } }, DELIVERY, 'abc', lower))).toBeUndefined();
      expect(codeOf(() => checkHeaderMatches({ headers: { 'x-svc-delivery': 'ABD' } }, DELIVERY, 'abc', lower))).toBe('delivery_id_mismatch');
    });
  });
});
