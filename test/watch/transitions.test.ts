import { harness, LEVEL, sleep, until, type Harness } from './harness';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('watchWebhooks against an emulated svc: each change of health is reported once', () => {
  let h: Harness;
  afterEach(() => h.close());

  it('healthy → failing → disabled → healthy: one onChange and one line each, at info, warn, error, info', async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    h.watch();
    await h.watcher!.checked();
    expect(h.path(board)).toEqual(['none→healthy']);

    await h.svc.failDeliveries(board, { error: 'receiver answered 502: bad gateway', events: 7 });
    await until(() => h.path(board).length === 2, 'failing');
    await sleep(200); // several more polls of the same state
    expect(h.path(board)).toEqual(['none→healthy', 'healthy→failing']);
    const failing = h.changes[1]!.current;
    expect(failing).toMatchObject({ state: 'failing', lastError: 'receiver answered 502: bad gateway', pending: 7 });
    expect(failing.failingSince!.ms).toBe(h.svc.webhook(board)!.failingSince);
    expect(failing.disablesAt).toBe(h.svc.webhook(board)!.failingSince! + DAY_MS);
    expect(failing.since).toBe(failing.failingSince!.ms);

    await h.svc.advance(DAY_MS); // a day of failures: svc disables it and drops its queue
    await until(() => h.path(board).length === 3, 'disabled');
    await sleep(200);
    expect(h.path(board)).toEqual(['none→healthy', 'healthy→failing', 'failing→disabled']);
    expect(h.changes[2]!.current).toMatchObject({ state: 'disabled', pending: 0 });
    expect(h.changes[2]!.current.disabledAt!.ms).toBe(failing.failingSince!.ms! + DAY_MS);

    // Re-enabled by hand, with the receiver's secret.
    await h.client.setBoardWebhook(board, { url: h.svc.webhook(board)!.url, secret: h.svc.knownSecret(board) });
    await until(() => h.path(board).length === 4, 'healthy again');
    await sleep(200);
    expect(h.path(board)).toEqual(['none→healthy', 'healthy→failing', 'failing→disabled', 'disabled→healthy']);

    const lines = h.lines().filter((l) => l.boardId === board);
    expect(lines.map((l) => [l.level, l.state, l.previous])).toEqual([
      [LEVEL.warn, 'failing', 'healthy'],
      [LEVEL.error, 'disabled', 'failing'],
      [LEVEL.info, 'healthy', 'disabled'],
    ]);
    expect(lines[0]).toMatchObject({
      lastError: 'receiver answered 502: bad gateway',
      pending: 7,
      disablesAt: new Date(failing.disablesAt!).toISOString(),
    });
    expect(lines[0]!.msg).toMatch(/failing since .*svc disables it in about 24 h .*7 pending; last error: receiver answered 502/);
    expect(lines[1]!.msg).toMatch(/disabled by svc at .*its queue was dropped/);
    expect(lines[2]!.msg).toMatch(/back to healthy \(was disabled\)/);
  });

  it('a first status that is healthy is counted in one line, not one line per webhook', async () => {
    h = await harness({ boards: 5 });
    h.watch();
    await h.watcher!.checked();
    await until(() => h.lines().some((l) => l.msg.startsWith('watching 5 webhooks')), 'the first-round line');
    expect(h.changes).toHaveLength(5);
    expect(h.lines().filter((l) => l.boardId !== undefined)).toEqual([]);
    expect(h.lines().find((l) => l.msg.startsWith('watching'))).toMatchObject({ level: LEVEL.info, watched: 5, healthy: 5 });
  });

  it('a first status that is not healthy is logged at once', async () => {
    h = await harness({ boards: 2 });
    const [a, b] = h.svc.boardIds as [string, string];
    await h.svc.failDeliveries(a);
    await h.svc.deleteWebhook(b);
    h.watch();
    await h.watcher!.checked();
    expect(h.path(a)).toEqual(['none→failing']);
    expect(h.path(b)).toEqual(['none→missing']);
    expect(
      h
        .lines()
        .filter((l) => l.boardId !== undefined)
        .map((l) => [l.boardId, l.level]),
    ).toEqual(
      expect.arrayContaining([
        [a, LEVEL.warn],
        [b, LEVEL.error],
      ]),
    );
  });

  it('plan below Business → paused (PLAN, error: events not queued) → upgraded → healthy', async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    h.watch();
    await h.watcher!.checked();
    h.svc.setPlan(board, 'free');
    await h.svc.enqueue(board, 3); // not queued while paused
    await until(() => h.path(board).length === 2, 'paused');
    expect(h.changes[1]!.current).toMatchObject({ state: 'paused', pausedReason: 'PLAN', pending: 0 });
    expect(h.lines().find((l) => l.state === 'paused')).toMatchObject({ level: LEVEL.error, pausedReason: 'PLAN' });
    expect(h.lines().find((l) => l.state === 'paused')!.msg).toMatch(/the plan dropped below Business\): new events are not queued/);
    h.svc.setPlan(board, 'business');
    await until(() => h.path(board).length === 3, 'resumed');
    await sleep(150);
    expect(h.path(board)).toEqual(['none→healthy', 'healthy→paused', 'paused→healthy']);
  });

  it('a pausedReason the spec does not list is paused with its raw value; another reason is another change', async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    h.svc.setPausedReason(board, 'LEGAL_HOLD');
    h.watch();
    await h.watcher!.checked();
    expect(h.changes[0]!.current).toMatchObject({ state: 'paused', pausedReason: 'LEGAL_HOLD' });
    expect(h.changes[0]!.current.summary).toMatch(/LEGAL_HOLD, a reason the spec does not list/);
    h.svc.setPausedReason(board, 'PLAN');
    await until(() => h.changes.length === 2, 'the other reason');
    await sleep(150);
    expect(h.changes.map((c) => c.current.pausedReason)).toEqual(['LEGAL_HOLD', 'PLAN']);
  });

  it('a deleted webhook → missing (error), and back when it is set again', async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    const { url } = h.svc.webhook(board)!;
    const secret = h.svc.knownSecret(board);
    h.watch({ missingIntervalMs: 40 });
    await h.watcher!.checked();
    await h.client.deleteBoardWebhook(board);
    await until(() => h.path(board).length === 2, 'missing');
    expect(h.changes[1]!.current).toMatchObject({ state: 'missing', reason: 'not_found' });
    expect(h.lines().find((l) => l.state === 'missing')).toMatchObject({ level: LEVEL.error });
    await h.client.setBoardWebhook(board, { url, secret });
    await until(() => h.path(board).length === 3, 'set again');
    expect(h.path(board)).toEqual(['none→healthy', 'healthy→missing', 'missing→healthy']);
  });

  it('watches the bot webhook through its own client, in statuses() after the boards', async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    h.watch({ bot: { client: h.botClient } });
    await h.watcher!.checked();
    expect(h.watcher!.statuses().map((s) => (s.webhook === 'board' ? s.boardId : 'bot'))).toEqual([board, 'bot']);
    await h.svc.failDeliveries('bot', { error: 'receiver answered 504: gateway timeout' });
    await until(() => h.path('bot').length === 2, 'bot failing');
    expect(h.changes.at(-1)!.current).toMatchObject({
      webhook: 'bot',
      state: 'failing',
      lastError: 'receiver answered 504: gateway timeout',
    });
    expect(h.lines().find((l) => l.webhook === 'bot')!.msg).toMatch(/^bot webhook: failing since/);
  });

  it('boards from a function: boards listed later are watched, boards no longer listed are dropped', async () => {
    h = await harness({ boards: 3 });
    const [a, b, c] = h.svc.boardIds as [string, string, string];
    let listed = [a, b];
    h.watch({ boards: async () => listed, boardsRefreshMs: 50 });
    await h.watcher!.checked();
    expect(h.watcher!.statuses().map((s) => (s.webhook === 'board' ? s.boardId : ''))).toEqual([a, b]);
    listed = [b, c];
    await until(() => h.watcher!.statuses().some((s) => s.webhook === 'board' && s.boardId === c), 'c watched');
    expect(h.watcher!.statuses().map((s) => (s.webhook === 'board' ? s.boardId : ''))).toEqual([b, c]);
    const before = h.svc.requests.filter((r) => r.which === a).length;
    await sleep(200);
    expect(h.svc.requests.filter((r) => r.which === a).length).toBe(before);
  });

  it('a status is healthy only when svc said so: extra fields are ignored, the state still read', async () => {
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    h.svc.fault(board, { fields: { deliveryRegion: 'eu', retries: [1, 2], hasSecret: true, nested: { a: 1 } } });
    h.watch();
    await h.watcher!.checked();
    expect(h.changes[0]!.current.state).toBe('healthy');
    h.svc.fault(board, { fields: { failingSince: new Date(h.svc.now()).toISOString(), futureField: 'x' } });
    await until(() => h.changes.length === 2, 'failing');
    expect(h.changes[1]!.current.state).toBe('failing');
  });
});
