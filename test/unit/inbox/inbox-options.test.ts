import { attemptsWithin, inboxSettings, retryDelay } from '../../../src/inbox/inbox-options';
import { deliveryIdOf, jobIdOf } from '../../../src/inbox/inbox-job';

describe('inbox retry window', () => {
  it('doubles the delay from retryDelay up to maxRetryDelay', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(n, 1000, 5000))).toEqual([1000, 2000, 4000, 5000, 5000]);
    expect(retryDelay(500, 1000, 3_600_000)).toBe(3_600_000);
  });

  it('allows as many runs as fit in retryForMs: the first run, then retries until their delays add up to it', () => {
    expect(attemptsWithin(0, 1000, 5000)).toBe(1);
    expect(attemptsWithin(1000, 1000, 5000)).toBe(2);
    expect(attemptsWithin(1001, 1000, 5000)).toBe(3);
    expect(attemptsWithin(3000, 1000, 5000)).toBe(3);
  });

  it('retries for a day by default, at most an hour apart', () => {
    const s = inboxSettings({ connection: 'redis://127.0.0.1:6379' });
    expect([s.retryForMs, s.retryDelayMs, s.maxRetryDelayMs, s.gapWaitMs, s.ordered]).toEqual([86_400_000, 1000, 3_600_000, 120_000, false]);
    let waited = 0;
    for (let n = 1; n < s.attempts; n++) waited += retryDelay(n, s.retryDelayMs, s.maxRetryDelayMs);
    expect(waited).toBeGreaterThanOrEqual(86_400_000);
    expect(waited - retryDelay(s.attempts - 1, s.retryDelayMs, s.maxRetryDelayMs)).toBeLessThan(86_400_000);
  });

  it('refuses a bad option at setup', () => {
    expect(() => inboxSettings({ connection: 'redis://h', prefix: 'a:b' })).toThrow(TypeError);
    expect(() => inboxSettings({ connection: 'redis://h', gapWaitMs: Number.NaN })).toThrow(RangeError);
    expect(() => inboxSettings({ connection: 'redis://h', maxRetryDelayMs: 10, retryDelayMs: 100 })).toThrow(RangeError);
    expect(() => inboxSettings({ connection: 'redis://h', ordered: ['task.updated', ''] })).toThrow(TypeError);
    expect(inboxSettings({ connection: 'redis://h', ordered: ['task.updated'] }).ordered).toEqual(new Set(['task.updated']));
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

describe('inbox options at setup', () => {
  const url = 'redis://127.0.0.1:6379/3';
  const DAY = 86_400_000;

  it('takes every documented option and keeps its value', () => {
    const s = inboxSettings({
      connection: url,
      prefix: 'app',
      retryForMs: 3000,
      retryDelayMs: 1000,
      maxRetryDelayMs: 5000,
      ordered: true,
      gapWaitMs: 500,
      keepProcessedMs: 60_000,
      enqueueTimeoutMs: 700,
    });
    expect(s).toStrictEqual({
      connection: url,
      prefix: 'app',
      retryForMs: 3000,
      retryDelayMs: 1000,
      maxRetryDelayMs: 5000,
      attempts: 3,
      ordered: true,
      gapWaitMs: 500,
      keepProcessedMs: 60_000,
      enqueueTimeoutMs: 700,
    });
  });

  it('defaults to the svc-webhooks prefix, unordered, a two-minute gap wait, processed jobs kept a day and an hour, and a 2 s enqueue timeout', () => {
    const s = inboxSettings({ connection: url });
    expect([s.connection, s.prefix, s.ordered, s.gapWaitMs, s.keepProcessedMs, s.enqueueTimeoutMs]).toEqual([
      url,
      'svc-webhooks',
      false,
      120_000,
      90_000_000,
      2000,
    ]);
  });

  it('refuses an unknown option with a TypeError', () => {
    expect(() => inboxSettings({ connection: url, retries: 3 } as never)).toThrow(TypeError);
  });

  it.each([
    ['null', null],
    ['a string', 'redis://h'],
    ['a number', 6379],
    ['a function, even with a url', Object.assign(() => undefined, { url: 'redis://h' })],
  ])('refuses options that are %s with a TypeError', (_what, options) => {
    expect(() => inboxSettings(options as never)).toThrow(TypeError);
  });

  it('takes a redis:// or rediss:// url', () => {
    expect(inboxSettings({ connection: 'redis://h' }).connection).toBe('redis://h');
    expect(inboxSettings({ connection: 'rediss://h:6380/1' }).connection).toBe('rediss://h:6380/1');
  });

  it.each([
    ['missing', undefined],
    ['of another scheme', 'http://h'],
    ['with redis:// not at its start', 'http://x/?redis://h'],
    ['without the slashes', 'redis:h'],
    ['not a string, even one that reads as a redis url', { toString: (): string => 'redis://h' }],
  ])('refuses a url %s with a TypeError', (_what, bad) => {
    expect(() => inboxSettings({ connection: bad } as never)).toThrow(TypeError);
  });

  it.each([
    ['empty', ''],
    ['with ":"', 'a:b'],
    ['not a string', ['app']],
    ['a number', 7],
  ])('refuses a prefix %s with a TypeError', (_what, prefix) => {
    expect(() => inboxSettings({ connection: url, prefix } as never)).toThrow(TypeError);
  });

  describe('on a Redis Cluster', () => {
    const cluster = ['redis://10.0.0.1:7000', 'redis://10.0.0.2:7000'];

    it('takes the seed nodes, waits for one replica by default and puts the queues under the hash-tagged {svc-webhooks}', () => {
      const s = inboxSettings({ connection: { cluster } });
      expect([s.connection, s.prefix]).toEqual([{ cluster, waitForReplicas: 1 }, '{svc-webhooks}']);
    });

    it('takes waitForReplicas from 0 to 16 and a prefix with a hash tag', () => {
      expect(inboxSettings({ connection: { cluster, waitForReplicas: 0 }, prefix: '{app}' }).connection).toEqual({ cluster, waitForReplicas: 0 });
      expect(inboxSettings({ connection: { cluster, waitForReplicas: 16 }, prefix: 'app{x}y' }).prefix).toBe('app{x}y');
      // Redis takes the first `{` and the first `}` after it: a `}` before them does not count.
      expect(inboxSettings({ connection: { cluster }, prefix: '}{a}' }).prefix).toBe('}{a}');
      for (const bad of [-1, 17, 1.5, Number.NaN, '1', null])
        expect(() => inboxSettings({ connection: { cluster, waitForReplicas: bad } } as never)).toThrow(RangeError);
    });

    it.each([
      ['without a hash tag', 'app'],
      ['with an empty hash tag', 'app{}'],
      ['with braces the wrong way round', '}app{'],
      ['with an opening brace only', '{app'],
      ['with a closing brace only', 'app}'],
    ])('refuses a prefix %s with a TypeError: the keys of a queue would spread over the slots', (_what, prefix) => {
      expect(() => inboxSettings({ connection: { cluster }, prefix })).toThrow(TypeError);
      expect(inboxSettings({ connection: url, prefix }).prefix).toBe(prefix);
    });

    it.each([
      ['no list', {}],
      ['an empty list', { cluster: [] }],
      ['a list with a non-redis URL', { cluster: ['http://h:1'] }],
      ['a list with a non-string', { cluster: [7000] }],
      ['redis:// and rediss:// mixed', { cluster: ['redis://a:1', 'rediss://b:1'] }],
      ['a database other than 0', { cluster: ['redis://a:1/2'] }],
      ['different credentials', { cluster: ['redis://:x@a:1', 'redis://:y@b:1'] }],
      ['an unknown member', { cluster, replicas: 1 }],
      ['an array', cluster],
      ['null', null],
    ])('refuses a cluster given as %s with a TypeError', (_what, connection) => {
      expect(() => inboxSettings({ connection } as never)).toThrow(TypeError);
    });
  });

  it.each([
    ['retryForMs', 0, 30 * DAY],
    ['retryDelayMs', 1, DAY],
    ['gapWaitMs', 0, DAY],
    ['keepProcessedMs', 0, 30 * DAY],
    ['enqueueTimeoutMs', 1, 9000],
  ])('takes %s from %d to %d ms and refuses anything else with a RangeError', (name, min, max) => {
    const withOption = (value: unknown) => inboxSettings({ connection: url, maxRetryDelayMs: DAY, [name]: value } as never);
    expect(() => withOption(min)).not.toThrow();
    expect(() => withOption(max)).not.toThrow();
    for (const bad of [min - 1, min - 0.5, max + 0.5, max + 1, Number.NaN, Number.POSITIVE_INFINITY, '1000', null]) {
      expect(() => withOption(bad)).toThrow(RangeError);
    }
  });

  it('takes maxRetryDelayMs from retryDelayMs to a day and refuses anything else with a RangeError', () => {
    expect(inboxSettings({ connection: url, retryDelayMs: 2000, maxRetryDelayMs: 2000 }).maxRetryDelayMs).toBe(2000);
    expect(inboxSettings({ connection: url, maxRetryDelayMs: DAY }).maxRetryDelayMs).toBe(DAY);
    expect(() => inboxSettings({ connection: url, retryDelayMs: 2000, maxRetryDelayMs: 1999 })).toThrow(RangeError);
    expect(() => inboxSettings({ connection: url, maxRetryDelayMs: DAY + 1 })).toThrow(RangeError);
  });

  it('defaults maxRetryDelay to one hour, or to retryDelay when that is longer, so the first retry waits as long as asked', () => {
    const HOUR = 3_600_000;
    expect(inboxSettings({ connection: url, retryDelayMs: HOUR - 1 }).maxRetryDelayMs).toBe(HOUR);
    expect(inboxSettings({ connection: url, retryDelayMs: HOUR }).maxRetryDelayMs).toBe(HOUR);
    const long = inboxSettings({ connection: url, retryDelayMs: 2 * HOUR });
    expect(long.maxRetryDelayMs).toBe(2 * HOUR);
    expect(retryDelay(1, long.retryDelayMs, long.maxRetryDelayMs)).toBe(2 * HOUR);
  });

  it('counts the attempts the retry window allows with the given delays', () => {
    expect(inboxSettings({ connection: url, retryForMs: 0 }).attempts).toBe(1);
    expect(inboxSettings({ connection: url, retryForMs: 7000, retryDelayMs: 1000, maxRetryDelayMs: 2000 }).attempts).toBe(5);
  });

  it.each([
    ['absent', undefined, false],
    ['false', false, false],
    ['true', true, true],
    ['a list of event types', ['task.created', 'task.updated'], new Set(['task.created', 'task.updated'])],
    ['an empty list', [], new Set()],
  ])('takes ordered %s', (_what, ordered, expected) => {
    expect(inboxSettings({ connection: url, ordered } as never).ordered).toStrictEqual(expected);
  });

  it.each([
    ['one event type not in a list', 'task.created'],
    ['null', null],
    ['an object', {}],
    ['a list with an empty type', ['task.created', '']],
    ['a list with a type that is not text', ['task.created', 7]],
    ['a number', 1],
  ])('refuses ordered as %s with a TypeError', (_what, ordered) => {
    expect(() => inboxSettings({ connection: url, ordered } as never)).toThrow(TypeError);
  });
});
