import { SvcWebhookError } from '../../src/errors';
import { checkHeaderMatches, isObject, malformed } from '../../src/receive/protocol';

function codeOf(run: () => void): string | undefined {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SvcWebhookError);
    return (err as SvcWebhookError).code;
  }
  return undefined;
}

describe('what both protocols share', () => {
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
      expect(codeOf(() => checkHeaderMatches({ headers: {} }, 'x-svc-event', 'ping', 'event_type_mismatch', 'X-Svc-Event'))).toBeUndefined();
    });

    it('must equal the body value when sent', () => {
      expect(codeOf(() => checkHeaderMatches({ headers: { 'x-svc-event': 'ping' } }, 'x-svc-event', 'ping', 'event_type_mismatch', 'X-Svc-Event'))).toBeUndefined();
      expect(codeOf(() => checkHeaderMatches({ headers: { 'x-svc-event': 'Ping' } }, 'x-svc-event', 'ping', 'event_type_mismatch', 'X-Svc-Event'))).toBe('event_type_mismatch');
    });

    it('is refused when sent twice, even with the matching value first', () => {
      const headers = { headers: {}, rawHeaders: ['X-Svc-Event', 'ping', 'X-Svc-Event', 'ping'] };
      expect(codeOf(() => checkHeaderMatches(headers, 'x-svc-event', 'ping', 'event_type_mismatch', 'X-Svc-Event'))).toBe('event_type_mismatch');
    });

    it('is compared in the canonical form given for both', () => {
      const lower = (v: string) => v.toLowerCase();
      expect(codeOf(() => checkHeaderMatches({ headers: { 'x-svc-delivery': 'ABC' } }, 'x-svc-delivery', 'abc', 'delivery_id_mismatch', 'X-Svc-Delivery', lower))).toBeUndefined();
      expect(codeOf(() => checkHeaderMatches({ headers: { 'x-svc-delivery': 'ABD' } }, 'x-svc-delivery', 'abc', 'delivery_id_mismatch', 'X-Svc-Delivery', lower))).toBe('delivery_id_mismatch');
    });
  });
});
