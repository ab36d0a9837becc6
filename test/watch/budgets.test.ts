import { harness, sleep, until, type Harness } from './harness';

/** Arrival times of the GETs of one board (or of all), in real ms. */
function gets(h: Harness, which?: string): number[] {
  return h.svc.requests.filter((r) => r.method === 'GET' && (which === undefined || r.which === which)).map((r) => r.at);
}

/** The most requests started within any window of `ms`. */
function busiest(times: number[], ms: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= ms) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe("watchWebhooks within svc's budget", () => {
  let h: Harness;
  afterEach(() => h.close());

  it('at most maxInFlight calls at once', async () => {
    h = await harness({ boards: 40, options: { apiDelayMs: 60 } });
    h.watch({ maxInFlight: 4, maxRequestsPerSecond: 10_000, intervalMs: 60_000 });
    await h.watcher!.checked();
    expect(h.svc.maxInFlight()).toBe(4);
    expect(gets(h)).toHaveLength(40);
  });

  it('at most maxRequestsPerSecond started in any second', async () => {
    h = await harness({ boards: 30 });
    const started = performance.now();
    h.watch({ maxRequestsPerSecond: 20, intervalMs: 60_000 });
    await h.watcher!.checked();
    expect(performance.now() - started).toBeGreaterThanOrEqual((29 / 20) * 1000 - 20);
    expect(busiest(gets(h), 1000)).toBeLessThanOrEqual(21);
  });

  it('one request per board per interval (±10 % jitter), never two at once for a board', async () => {
    h = await harness({ boards: 8 });
    h.watch({ intervalMs: 150 });
    await sleep(1_600);
    await h.watcher!.close();
    for (const board of h.svc.boardIds) {
      const times = gets(h, board);
      // At most one per interval (the budget); at least most of them (a loaded machine's timers run late).
      expect(times.length).toBeGreaterThanOrEqual(6);
      expect(times.length).toBeLessThanOrEqual(13);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(150 * 0.9 - 5);
    }
  });

  it('a webhook svc answers 404 for is polled every missingIntervalMs instead', async () => {
    h = await harness({ boards: 2 });
    const [kept, gone] = h.svc.boardIds as [string, string];
    await h.svc.deleteWebhook(gone);
    h.watch({ intervalMs: 50, missingIntervalMs: 600 });
    await sleep(1_000);
    await h.watcher!.close();
    expect(gets(h, kept).length).toBeGreaterThanOrEqual(8);
    expect(gets(h, gone).length).toBeLessThanOrEqual(2);
  });

  it('a 429 pauses every poll for Retry-After; the status stands (a 429 says nothing of the webhook)', async () => {
    h = await harness({ boards: 3 });
    h.watch({ intervalMs: 50 });
    await h.watcher!.checked();
    const from = h.svc.requests.length;
    h.svc.fault('*', { status: 429, retryAfter: '1', times: 1 });
    await until(() => h.svc.requests.length >= from + 2, 'the polls after the wait');
    expect(h.svc.requests[from]!.status).toBe(429);
    expect(h.svc.requests[from + 1]!.at - h.svc.requests[from]!.at).toBeGreaterThanOrEqual(995);
    expect(h.changes.map((c) => c.current.state)).toEqual(['healthy', 'healthy', 'healthy']);
  });

  it('429s in a row: reported unreachable `rate_limited` at the third', async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    h.svc.fault(board, { status: 429, retryAfter: '1' });
    h.watch({ intervalMs: 20 });
    await until(() => h.changes.length === 1, 'a status');
    expect(h.changes[0]!.current).toMatchObject({ state: 'unreachable', reason: 'rate_limited' });
    const times = gets(h, board);
    expect(times).toHaveLength(3);
    expect(times[2]! - times[0]!).toBeGreaterThanOrEqual(1_990);
  });

  it('svc rate-limiting the watcher: nothing starts within Retry-After of a 429, and every webhook is checked', async () => {
    h = await harness({ boards: 12, options: { apiRateLimit: { perSecond: 5, retryAfterSeconds: 1 } } });
    h.watch({ intervalMs: 60_000, maxRequestsPerSecond: 100 });
    await h.watcher!.checked();
    expect(h.watcher!.statuses().map((s) => s.state)).toEqual(Array(12).fill('healthy'));
    const all = h.svc.requests;
    const limited = all.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    // Requests already on their way when the 429 came back arrive within a few ms; none start later in the second.
    for (const r of limited) expect(all.filter((o) => o.at > r.at + 50 && o.at < r.at + 995)).toEqual([]);
  });

  it('a 503 with Retry-After pauses the polls too, and is reported unreachable', async () => {
    h = await harness({ boards: 2 });
    h.watch({ intervalMs: 30 });
    await h.watcher!.checked();
    const from = h.svc.requests.length;
    h.svc.fault('*', { status: 503, retryAfter: '1', times: 1 });
    await until(() => h.svc.requests.length >= from + 2, 'the polls after the wait');
    expect(h.svc.requests[from]!.status).toBe(503);
    expect(h.svc.requests[from + 1]!.at - h.svc.requests[from]!.at).toBeGreaterThanOrEqual(995);
    expect(h.changes.some((c) => c.current.state === 'unreachable' && c.current.httpStatus === 503)).toBe(true);
  });
});

describe('more webhooks than the budget allows at the interval', () => {
  it('says so once, at warn, with how often each is polled instead', async () => {
    const h = await harness({ boards: 30 });
    try {
      h.watch({ intervalMs: 1_000, maxRequestsPerSecond: 10 });
      await until(() => h.lines().some((l) => l.maxRequestsPerSecond === 10), 'the warning');
      const line = h.lines().find((l) => l.maxRequestsPerSecond === 10)!;
      expect(line.level).toBe(40);
      expect(line.msg).toBe(
        '30 webhooks every 1000 ms need 30.0 calls per second, more than maxRequestsPerSecond (10): each is polled about every 3 s instead',
      );
    } finally {
      await h.close();
    }
  });
});
