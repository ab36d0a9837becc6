import { attemptsWithin, inboxSettings, retryDelay } from '../../src/inbox/inbox-options';
import { deliveryIdOf, jobIdOf } from '../../src/inbox/inbox-job';

describe('inbox retry window', () => {
  it('doubles the delay from retryDelay up to maxRetryDelay', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(n, 1000, 5000))).toEqual([1000, 2000, 4000, 5000, 5000]);
    expect(retryDelay(500, 1000, 3_600_000)).toBe(3_600_000);
  });

  it('allows as many runs as fit in retryFor: the first run, then retries until their delays add up to it', () => {
    expect(attemptsWithin(0, 1000, 5000)).toBe(1);
    expect(attemptsWithin(1000, 1000, 5000)).toBe(2);
    expect(attemptsWithin(1001, 1000, 5000)).toBe(3);
    expect(attemptsWithin(3000, 1000, 5000)).toBe(3);
  });

  it('retries for a day by default, at most an hour apart', () => {
    const s = inboxSettings({ url: 'redis://127.0.0.1:6379' });
    expect([s.retryForMs, s.retryDelayMs, s.maxRetryDelayMs, s.gapWaitMs, s.ordered]).toEqual([86_400_000, 1000, 3_600_000, 120_000, false]);
    let waited = 0;
    for (let n = 1; n < s.attempts; n++) waited += retryDelay(n, s.retryDelayMs, s.maxRetryDelayMs);
    expect(waited).toBeGreaterThanOrEqual(86_400_000);
    expect(waited - retryDelay(s.attempts - 1, s.retryDelayMs, s.maxRetryDelayMs)).toBeLessThan(86_400_000);
  });

  it('refuses a bad option at setup', () => {
    expect(() => inboxSettings({ url: 'redis://h', prefix: 'a:b' })).toThrow(TypeError);
    expect(() => inboxSettings({ url: 'redis://h', gapWaitMs: Number.NaN })).toThrow(RangeError);
    expect(() => inboxSettings({ url: 'redis://h', maxRetryDelay: 10, retryDelay: 100 })).toThrow(RangeError);
    expect(() => inboxSettings({ url: 'redis://h', ordered: ['task.updated', ''] })).toThrow(TypeError);
    expect(inboxSettings({ url: 'redis://h', ordered: ['task.updated'] }).ordered).toEqual(new Set(['task.updated']));
  });
});

describe('inbox job ids', () => {
  it('map each delivery id to one BullMQ-safe job id and back', () => {
    const ids = ['55a735e8-1629-4e66-89db-0b25ff7f0fdb', '42', 'a:b:c', '%3A', ':', 'a%b'];
    const jobIds = ids.map(jobIdOf);
    expect(new Set(jobIds).size).toBe(ids.length);
    for (const jobId of jobIds) {
      expect(jobId).not.toContain(':');
      expect(`${parseInt(jobId, 10)}`).not.toBe(jobId);
    }
    expect(jobIds.map(deliveryIdOf)).toEqual(ids);
  });
});
