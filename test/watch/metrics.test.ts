/**
 * The watcher's metrics with the real OpenTelemetry SDK, registered as an application registers it,
 * after the watcher has started (the watcher finds it at its next poll).
 */
import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { MAX_BOARD_SERIES } from '../../src/watch/watch-metrics';
import { harness, until, type Harness } from './harness';

class CollectOnDemand extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

async function collected(reader: MetricReader, name: string): Promise<MetricData | undefined> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
}

function points(metric: MetricData | undefined): Array<{ attributes: Record<string, unknown>; value: number }> {
  return (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value as number }));
}

describe("the watcher's OpenTelemetry metrics", () => {
  let h: Harness;
  let reader: CollectOnDemand;
  beforeEach(() => {
    reader = new CollectOnDemand();
  });
  afterEach(async () => {
    await h.close();
    metrics.disable();
  });

  it('a gauge of webhooks per webhook and state, and a state set per board once seen not healthy', async () => {
    h = await harness({ boards: 5 });
    const [a, b, c, d] = h.svc.boardIds as [string, string, string, string];
    await h.svc.failDeliveries(a);
    h.svc.setPlan(b, 'free');
    await h.svc.deleteWebhook(c);
    await h.client.setBoardWebhook(d, { url: 'https://elsewhere.example.net/webhooks/board', secret: h.svc.knownSecret(d) });
    // A string is the board webhooks' URL: the bot's is not checked.
    h.watch({ bot: { client: h.botClient }, expectUrl: 'https://hooks.example.com/webhooks/board' });
    await h.watcher!.checked();
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    await until(() => h.svc.requests.length >= 14, 'a poll after the registration');

    const counts = points(await collected(reader, 'svc.webhook.watch.webhooks'));
    const count = (webhook: string, state: string) =>
      counts.find((p) => p.attributes['svc.webhook'] === webhook && p.attributes['svc.webhook.state'] === state)?.value;
    expect(count('board', 'healthy')).toBe(1);
    expect(count('board', 'failing')).toBe(1);
    expect(count('board', 'paused')).toBe(1);
    expect(count('board', 'missing')).toBe(1);
    expect(count('board', 'misdirected')).toBe(1);
    expect(count('board', 'disabled')).toBe(0);
    expect(count('bot', 'healthy')).toBe(1);
    expect(counts).toHaveLength(2 * 7);

    const states = points(await collected(reader, 'svc.webhook.watch.state'));
    const ones = states.filter((p) => p.value === 1).map((p) => p.attributes);
    expect(ones.sort((x, y) => String(x['svc.webhook.state']).localeCompare(String(y['svc.webhook.state'])))).toEqual([
      { 'svc.webhook': 'board', 'svc.webhook.board_id': a, 'svc.webhook.state': 'failing' },
      { 'svc.webhook': 'bot', 'svc.webhook.state': 'healthy' },
      { 'svc.webhook': 'board', 'svc.webhook.board_id': d, 'svc.webhook.state': 'misdirected' },
      { 'svc.webhook': 'board', 'svc.webhook.board_id': c, 'svc.webhook.state': 'missing' },
      { 'svc.webhook': 'board', 'svc.webhook.board_id': b, 'svc.webhook.state': 'paused' },
    ]);
    // A state set: the other six states of each of them read 0; the healthy board has no series.
    expect(states).toHaveLength(5 * 7);
    expect(states.some((p) => p.attributes['svc.webhook.board_id'] === h.svc.boardIds[4])).toBe(false);
  });

  it('a board back to healthy reads 0 in its old state and 1 in healthy (no stale alarm)', async () => {
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    await h.svc.failDeliveries(board);
    h.watch();
    await h.watcher!.checked();
    const value = async (state: string) =>
      points(await collected(reader, 'svc.webhook.watch.state')).find(
        (p) => p.attributes['svc.webhook.board_id'] === board && p.attributes['svc.webhook.state'] === state,
      )?.value;
    expect(await value('failing')).toBe(1);
    expect(await value('healthy')).toBe(0);
    await h.svc.succeedDelivery(board);
    await until(() => h.changes.length === 2, 'healthy');
    expect(await value('failing')).toBe(0);
    expect(await value('healthy')).toBe(1);
  });

  it('counts transitions, polls and re-enable attempts, with bounded labels', async () => {
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    h = await harness({ boards: 1 });
    const [board] = h.svc.boardIds as [string];
    h.watch({
      reenable: true,
      expectUrl: 'https://hooks.example.com/webhooks/board',
      secret: 'the-receivers-board-secret-0123456789',
      probe: () => false,
      reenableBackoffMs: 60_000,
    });
    await h.watcher!.checked();
    // svc fails the webhook, then disables it a day later.
    await h.svc.failDeliveries(board, { error: 'x' });
    await until(() => h.changes.length === 2, 'failing');
    await h.svc.advance(24 * 60 * 60 * 1000);
    await until(() => h.changes.length === 3, 'disabled');
    await until(async () => points(await collected(reader, 'svc.webhook.watch.reenables')).length > 0, 'the attempt');

    const transitions = points(await collected(reader, 'svc.webhook.watch.transitions')).map((p) => [
      p.attributes['svc.webhook.previous_state'],
      p.attributes['svc.webhook.state'],
      p.value,
    ]);
    expect(transitions).toEqual(
      expect.arrayContaining([
        ['none', 'healthy', 1],
        ['healthy', 'failing', 1],
        ['failing', 'disabled', 1],
      ]),
    );
    const polls = points(await collected(reader, 'svc.webhook.watch.polls'));
    expect(polls.find((p) => p.attributes['svc.webhook.state'] === 'healthy')!.value).toBeGreaterThanOrEqual(1);
    expect(points(await collected(reader, 'svc.webhook.watch.reenables'))).toEqual([
      { attributes: { 'svc.webhook': 'board', 'svc.webhook.outcome': 'probe_failed' }, value: 1 },
    ]);
  });

  it(`at most ${MAX_BOARD_SERIES} boards get a series of their own; every board is counted`, async () => {
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
    h = await harness({ boards: MAX_BOARD_SERIES + 20 });
    for (const board of h.svc.boardIds) await h.svc.failDeliveries(board);
    h.watch({ maxRequestsPerSecond: 10_000 });
    await h.watcher!.checked();
    const boards = new Set(points(await collected(reader, 'svc.webhook.watch.state')).map((p) => p.attributes['svc.webhook.board_id']));
    expect(boards.size).toBe(MAX_BOARD_SERIES);
    const failing = points(await collected(reader, 'svc.webhook.watch.webhooks')).find((p) => p.attributes['svc.webhook.state'] === 'failing');
    expect(failing!.value).toBe(MAX_BOARD_SERIES + 20);
  });
});
