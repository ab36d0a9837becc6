import type * as OtelApi from '@opentelemetry/api';
import { API_REGISTRY, loadApi, type Api } from '../observe/otel-api';
import { webhookHealths, type WebhookChange, type WebhookHealth, type WebhookStatus } from './watch-types';

const SCOPE = 'svc-webhooks';
export const METRIC_WEBHOOKS = 'svc.webhook.watch.webhooks';
export const METRIC_STATE = 'svc.webhook.watch.state';
export const METRIC_TRANSITIONS = 'svc.webhook.watch.transitions';
export const METRIC_POLLS = 'svc.webhook.watch.polls';
export const METRIC_REENABLES = 'svc.webhook.watch.reenables';
/**
 * Boards with series of their own in the per-board gauge, at most: the first this many seen not
 * healthy get them, for the watcher's life (an SDK keeps a series it was once given, so a board is
 * never dropped for another). A healthy board has none until then (10,000 boards would be 60,000
 * series); every webhook is counted in the per-state gauge, and the log names each.
 */
export const MAX_BOARD_SERIES = 100;

/** How a re-enable attempt ended. */
export type ReenableOutcome = 'reenabled' | 'probe_failed' | 'no_secret' | 'url_unchecked' | 'failed' | 'given_up';

interface Instruments {
  readonly gauges: readonly OtelApi.ObservableGauge[];
  readonly callbacks: readonly OtelApi.ObservableCallback[];
  readonly transitions: OtelApi.Counter;
  readonly polls: OtelApi.Counter;
  readonly reenables: OtelApi.Counter;
}

/**
 * The watcher's OpenTelemetry metrics, through `@opentelemetry/api` when it is installed and a
 * meter provider is registered (looked up at each poll, so one registered later is found):
 * - `svc.webhook.watch.webhooks`: gauge, webhooks per `svc.webhook` (board, bot) and `svc.webhook.state`;
 * - `svc.webhook.watch.state`: gauge per webhook and state, 1 for its state and 0 for the others
 *   (a state set), for the bot and for each board once seen not healthy (at most MAX_BOARD_SERIES,
 *   by `svc.webhook.board_id`);
 * - `svc.webhook.watch.transitions`: counter of changes, by webhook, `svc.webhook.state` and
 *   `svc.webhook.previous_state`;
 * - `svc.webhook.watch.polls`: counter of polls, by webhook and the state they found;
 * - `svc.webhook.watch.reenables`: counter of re-enable attempts, by webhook and `svc.webhook.outcome`.
 * Every label takes a bounded set of values but the board id, which is bounded by MAX_BOARD_SERIES.
 */
export class WatchMetrics {
  private readonly otel: Api | null = loadApi();
  private provider: OtelApi.MeterProvider | undefined;
  private instruments: Instruments | undefined;
  /** Boards with series in the per-board gauge, kept for the watcher's life. */
  private readonly tracked = new Set<string>();

  constructor(private readonly statuses: () => Iterable<WebhookStatus>) {}

  transition(change: WebhookChange): void {
    const previous = change.previous?.state ?? 'none';
    this.current()?.transitions.add(1, {
      'svc.webhook': change.current.webhook,
      'svc.webhook.state': change.current.state,
      'svc.webhook.previous_state': previous,
    });
  }

  poll(status: WebhookStatus): void {
    this.current()?.polls.add(1, { 'svc.webhook': status.webhook, 'svc.webhook.state': status.state });
  }

  reenable(webhook: 'board' | 'bot', outcome: ReenableOutcome): void {
    this.current()?.reenables.add(1, { 'svc.webhook': webhook, 'svc.webhook.outcome': outcome });
  }

  /** Unhooks the gauges' callbacks. */
  close(): void {
    this.drop();
    this.provider = undefined;
  }

  /** The instruments of the registered meter provider, made again when another one is registered. */
  private current(): Instruments | undefined {
    const otel = this.otel;
    if (otel === null || (globalThis as Record<symbol, unknown>)[API_REGISTRY] === undefined) return undefined;
    try {
      const provider = otel.metrics.getMeterProvider();
      if (provider !== this.provider) {
        this.drop();
        this.provider = provider;
        const meter = provider.getMeter(SCOPE);
        this.instruments = meter === otel.createNoopMeter() ? undefined : this.make(meter);
      }
      return this.instruments;
    } catch {
      // An SDK that throws leaves the watcher without metrics, never without its watching.
      return undefined;
    }
  }

  private make(meter: OtelApi.Meter): Instruments {
    const webhooks = meter.createObservableGauge(METRIC_WEBHOOKS, {
      description: 'Watched webhooks, by webhook and health as svc reports it',
      unit: '{webhook}',
    });
    const states = meter.createObservableGauge(METRIC_STATE, {
      description: "A webhook's health: 1 for its state, 0 for the others; the bot, and boards once seen not healthy (at most 100)",
      unit: '{webhook}',
    });
    const count: OtelApi.ObservableCallback = (result) => this.observeCounts(result);
    const each: OtelApi.ObservableCallback = (result) => this.observeStates(result);
    webhooks.addCallback(count);
    states.addCallback(each);
    return {
      gauges: [webhooks, states],
      callbacks: [count, each],
      transitions: meter.createCounter(METRIC_TRANSITIONS, { description: 'Changes of health of watched webhooks', unit: '{change}' }),
      polls: meter.createCounter(METRIC_POLLS, { description: 'Polls of webhook state, by the health they found', unit: '{poll}' }),
      reenables: meter.createCounter(METRIC_REENABLES, { description: 'Re-enable attempts of disabled webhooks, by outcome', unit: '{attempt}' }),
    };
  }

  private observeCounts(result: OtelApi.ObservableResult): void {
    const counts = new Map<string, number>();
    for (const webhook of ['board', 'bot'] as const) for (const state of webhookHealths) counts.set(`${webhook}:${state}`, 0);
    let bot = false;
    for (const status of this.statuses()) {
      const key = `${status.webhook}:${status.state}`;
      counts.set(key, counts.get(key)! + 1);
      bot ||= status.webhook === 'bot';
    }
    for (const [key, value] of counts) {
      const [webhook, state] = key.split(':') as ['board' | 'bot', WebhookHealth];
      if (webhook === 'board' || bot) result.observe(value, { 'svc.webhook': webhook, 'svc.webhook.state': state });
    }
  }

  private observeStates(result: OtelApi.ObservableResult): void {
    const now = new Map<string, WebhookHealth>();
    for (const status of this.statuses()) {
      if (status.webhook === 'bot') {
        for (const state of webhookHealths) result.observe(state === status.state ? 1 : 0, { 'svc.webhook': 'bot', 'svc.webhook.state': state });
        continue;
      }
      now.set(status.boardId, status.state);
      if (status.state !== 'healthy' && this.tracked.size < MAX_BOARD_SERIES) this.tracked.add(status.boardId);
    }
    // A tracked board no longer watched reads 0 in every state.
    for (const boardId of this.tracked) {
      const current = now.get(boardId);
      for (const state of webhookHealths)
        result.observe(state === current ? 1 : 0, { 'svc.webhook': 'board', 'svc.webhook.board_id': boardId, 'svc.webhook.state': state });
    }
  }

  private drop(): void {
    const instruments = this.instruments;
    this.instruments = undefined;
    if (instruments === undefined) return;
    try {
      instruments.gauges.forEach((gauge, i) => gauge.removeCallback(instruments.callbacks[i]!));
    } catch {
      // An SDK that throws here keeps a callback that reads a watcher no longer polling: harmless.
    }
  }
}
