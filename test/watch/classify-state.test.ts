import { SvcClientError } from '../../src/client';
import { classify, DISABLE_AFTER_MS, displayUrl, type Observation } from '../../src/watch/classify-state';
import type { WebhookStatus } from '../../src/watch/watch-types';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const BOARD = { webhook: 'board', boardId: 'b1' } as const;
const HEALTHY = {
  url: 'https://hooks.example.com/in',
  hasSecret: true,
  enabled: true,
  disabledAt: null,
  failingSince: null,
  lastOkAt: '2026-11-26T11:59:00Z',
  lastError: null,
  pending: 0,
  pausedReason: null,
};

function of(body: unknown, previous?: WebhookStatus): WebhookStatus {
  return classify({ target: BOARD, observation: { kind: 'state', body }, previous, now: NOW }).status;
}

describe('classify: the health of a webhook from what svc answered', () => {
  it('healthy only when enabled is true, with no pausedReason and no failingSince', () => {
    expect(of(HEALTHY)).toMatchObject({
      state: 'healthy',
      since: NOW,
      checkedAt: NOW,
      pending: 0,
      lastOkAt: { raw: '2026-11-26T11:59:00Z', ms: Date.parse('2026-11-26T11:59:00Z') },
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'enabled false beats a pause and a failure',
      { enabled: false, disabledAt: '2026-11-26T10:00:00Z', pausedReason: 'PLAN', failingSince: '2026-11-25T10:00:00Z' },
      'disabled',
    ],
    ['a pause beats a failure', { pausedReason: 'PLAN', failingSince: '2026-11-26T10:00:00Z' }, 'paused'],
    ['failingSince set', { failingSince: '2026-11-26T10:00:00Z' }, 'failing'],
    ['an empty pausedReason is no pause (an unset enum)', { pausedReason: '' }, 'healthy'],
    ['enabled true with an old disabledAt (re-enabled)', { disabledAt: '2026-11-01T00:00:00Z' }, 'healthy'],
    ['enabled absent, disabledAt set', { enabled: undefined, disabledAt: '2026-11-26T10:00:00Z' }, 'disabled'],
    ['enabled a text', { enabled: 'true' }, 'unreachable'],
    ['enabled absent', { enabled: undefined }, 'unreachable'],
  ])('%s → %s', (_name, fields, state) => {
    expect(of({ ...HEALTHY, ...fields }).state).toBe(state);
  });

  it('failing: since and disablesAt from failingSince, a day later', () => {
    const status = of({ ...HEALTHY, failingSince: '2026-11-26T10:00:00Z', lastError: 'receiver answered 500', pending: 12 });
    const from = Date.parse('2026-11-26T10:00:00Z');
    expect(status).toMatchObject({ state: 'failing', since: from, disablesAt: from + DISABLE_AFTER_MS, lastError: 'receiver answered 500', pending: 12 });
    expect(status.summary).toBe(
      'failing since 2026-11-26T10:00:00.000Z: svc disables it in about 22 h (at 2026-11-27T10:00:00.000Z), dropping its queue, 12 pending; last error: receiver answered 500',
    );
  });

  it("scrubs svc's lastError as a log line is: a signature the receiver echoed, fields named like credentials", () => {
    const signature = `v1=${'ab'.repeat(32)}`;
    const echoed = of({ ...HEALTHY, failingSince: '2026-11-26T10:00:00Z', lastError: `receiver answered 401: bad X-Svc-Signature ${signature}` });
    expect(echoed.lastError).toBe('receiver answered 401: bad X-Svc-Signature v1=[Redacted]');
    expect(echoed.summary).not.toContain('ab'.repeat(32));
    const object = of({
      ...HEALTHY,
      failingSince: '2026-11-26T10:00:00Z',
      lastError: { status: 401, headers: { authorization: 'Bearer abc', 'x-svc-signature': signature } },
    });
    expect(object.lastError).toBe('{"status":401,"headers":{"authorization":"[Redacted]","x-svc-signature":"[Redacted]"}}');
  });

  it('failing past the day: "any moment now"', () => {
    expect(of({ ...HEALTHY, failingSince: '2026-11-25T10:00:00Z' }).summary).toMatch(/svc disables it any moment now/);
  });

  it('since: kept from the previous status of the same state, else now', () => {
    const first = of({ ...HEALTHY, pausedReason: 'PLAN' });
    const later = classify({
      target: BOARD,
      observation: { kind: 'state', body: { ...HEALTHY, pausedReason: 'PLAN' } },
      previous: first,
      now: NOW + 60_000,
    }).status;
    expect(later.since).toBe(NOW);
    const other = classify({ target: BOARD, observation: { kind: 'state', body: HEALTHY }, previous: first, now: NOW + 60_000 }).status;
    expect(other.since).toBe(NOW + 60_000);
  });

  it('the raw URL is kept for a PUT; the shown one loses its query and credentials', () => {
    const { status, rawUrl } = classify({
      target: BOARD,
      observation: { kind: 'state', body: { ...HEALTHY, url: 'https://user:pw@hooks.example.com/in?token=abc#x' } },
      previous: undefined,
      now: NOW,
    });
    expect(rawUrl).toBe('https://user:pw@hooks.example.com/in?token=abc#x');
    expect(status.url).toBe('https://hooks.example.com/in?…');
    expect(displayUrl('not a url')).toBe('(not a URL)');
  });

  it.each<[string, Observation, Partial<WebhookStatus>]>([
    ['404', { kind: 'missing' }, { state: 'missing', reason: 'not_found' }],
    [
      '401',
      { kind: 'error', error: new SvcClientError('svc_api_error', 'svc answered 401', { status: 401 }) },
      { state: 'unreachable', reason: 'unauthorized', httpStatus: 401 },
    ],
    [
      '403',
      { kind: 'error', error: new SvcClientError('svc_api_error', 'svc answered 403', { status: 403 }) },
      { state: 'unreachable', reason: 'forbidden', httpStatus: 403 },
    ],
    [
      '500',
      { kind: 'error', error: new SvcClientError('svc_api_error', 'svc answered 500', { status: 500 }) },
      { state: 'unreachable', reason: 'svc_api_error', httpStatus: 500 },
    ],
    ['a timeout', { kind: 'error', error: new SvcClientError('timeout', 'no answer') }, { state: 'unreachable', reason: 'timeout' }],
    ['a thrown string', { kind: 'error', error: 'boom' }, { state: 'unreachable', reason: 'error' }],
    ['a body that is not an object', { kind: 'state', body: 'healthy' }, { state: 'unreachable', reason: 'malformed_state' }],
  ])('%s', (_name, observation, expected) => {
    expect(classify({ target: BOARD, observation, previous: undefined, now: NOW }).status).toMatchObject(expected);
  });

  it('a bot status names no board', () => {
    const status = classify({ target: { webhook: 'bot' }, observation: { kind: 'state', body: HEALTHY }, previous: undefined, now: NOW }).status;
    expect(status).toMatchObject({ webhook: 'bot', state: 'healthy' });
    expect('boardId' in status).toBe(false);
  });
});
