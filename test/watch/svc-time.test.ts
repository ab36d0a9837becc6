import { readSvcTime } from '../../src/watch/svc-time';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const AT = Date.UTC(2026, 10, 25, 9, 30, 15);

describe('readSvcTime: a timestamp of svc, whatever its format (the spec does not give one)', () => {
  it.each<[string, unknown, number]>([
    ['ISO 8601 with Z', '2026-11-25T09:30:15Z', AT],
    ['ISO 8601 with milliseconds', '2026-11-25T09:30:15.250Z', AT + 250],
    ['RFC 3339 with nanoseconds', '2026-11-25T09:30:15.250123456Z', AT + 250],
    ['an offset', '2026-11-25T11:30:15+02:00', AT],
    ['an offset without a colon', '2026-11-25T04:30:15-0500', AT],
    ['a space for T, no zone (UTC)', '2026-11-25 09:30:15', AT],
    ['no seconds', '2026-11-25T09:30Z', AT - 15_000],
    ['seconds since the epoch', AT / 1000, AT],
    ['seconds since the epoch with a fraction', AT / 1000 + 0.5, AT + 500],
    ['seconds as a text', String(AT / 1000), AT],
    ['milliseconds since the epoch', AT, AT],
    ['milliseconds as a text', String(AT), AT],
    ['an HTTP date', new Date(AT).toUTCString(), AT],
    ['a protobuf Timestamp', { seconds: String(AT / 1000), nanos: 250_000_000 }, AT + 250],
    ['a protobuf Timestamp with numbers', { seconds: AT / 1000, nanos: 0 }, AT],
  ])('%s', (_name, value, ms) => {
    expect(readSvcTime(value, NOW)?.ms).toBe(ms);
  });

  it.each<[string, unknown]>([
    ['words', 'yesterday'],
    ['a date without a time', '2026-11-25'],
    ['a month that does not exist', '2026-13-25T09:30:15Z'],
    ['a negative number', -5],
    ['NaN', Number.NaN],
    ['before 2000', '1999-12-31T23:59:59Z'],
    ['more than a year ahead', '2028-01-01T00:00:00Z'],
    ['an array', [2026, 11, 25]],
    ['a boolean', true],
    ['an object without seconds', { when: 'now' }],
  ])('%s: kept as raw text, no time', (_name, value) => {
    const time = readSvcTime(value, NOW)!;
    expect(time.ms).toBeUndefined();
    expect(typeof time.raw).toBe('string');
  });

  it('null and absent are no time at all', () => {
    expect(readSvcTime(null, NOW)).toBeUndefined();
    expect(readSvcTime(undefined, NOW)).toBeUndefined();
  });

  it('the raw text is bounded and printable', () => {
    const time = readSvcTime(`\u001b[31m${'x'.repeat(500)}`, NOW)!;
    expect(time.raw).not.toContain('\u001b');
    expect(time.raw.length).toBeLessThanOrEqual(65);
  });
});
