import type * as OtelApi from '@opentelemetry/api';
import { API_REGISTRY, loadApi, type Api } from '../observe/otel-api';
import { webhookHealths, type WebhookChange, type WebhookHealth, type WebhookStatus } from './watch-types';

const SCOPE = 'svc-webhooks';
export const METRIC_WEBHOOKS = 'svc.webhook.watch.webhooks';
export const METRIC_UNHEALTHY = 'svc.webhook.watch.unhealthy';
export const METRIC_TRANSITIONS = 'svc.webhook.watch.transitions';
export const METRIC_POLLS = 'svc.webhook.watch.polls';
export const METRIC_REENABLES = 'svc.webhook.watch.reenables';
/**
 * Series of the per-board gauge at most: only webhooks that are not healthy get one, the first this
 * many of them. A healthy board has none (10,000 boards would be 10,000 series); every webhook is
 * counted in the per-state gauge.
 */
export const MAX_BOARD_SERIES = 100;

/** How a re-enable attempt ended. */
export type ReenableOutcome = 'reenabled' | 'probe_failed' | 'no_secret' | 'failed' | 'given_up';

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
 * - `svc.webhook.watch.unhealthy`: gauge, 1 per webhook that is not healthy, with its
 *   `svc.webhook.board_id` (at most MAX_BOARD_SERIES boards) and state;
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

  constructor(private readonly statuses: () => Iterable<WebhookStatus>) {}

  transition(change: WebhookChange): void {
    const previous = change.previous?.state ?? 'none';
    this.current()?.transitions.add(1, { 'svc.webhook': change.current.webhook, 'svc.webhook.state': change.current.state, 'svc.webhook.previous_state': previous });
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
    const webhooks = meter.createObservableGauge(METRIC_WEBHOOKS, { description: 'Watched webhooks, by webhook and health as svc reports it', unit: '{webhook}' });
    const unhealthy = meter.createObservableGauge(METRIC_UNHEALTHY, { description: 'Webhooks that are not healthy (1 each), by board and health; at most 100 boards', unit: '{webhook}' });
    const count: OtelApi.ObservableCallback = (result) => this.observeCounts(result);
    const each: OtelApi.ObservableCallback = (result) => this.observeUnhealthy(result);
    webhooks.addCallback(count);
    unhealthy.addCallback(each);
    return {
      gauges: [webhooks, unhealthy],
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

  private observeUnhealthy(result: OtelApi.ObservableResult): void {
    let boards = 0;
    for (const status of this.statuses()) {
      if (status.state === 'healthy') continue;
      if (status.webhook === 'bot') result.observe(1, { 'svc.webhook': 'bot', 'svc.webhook.state': status.state });
      else if (boards++ < MAX_BOARD_SERIES) result.observe(1, { 'svc.webhook': 'board', 'svc.webhook.board_id': status.boardId, 'svc.webhook.state': status.state });
    }
  }

  private drop(): void {
    const instruments = this.instruments;
    this.instruments = undefined;
    if (instruments === undefined) return;
    instruments.gauges.forEach((gauge, i) => gauge.removeCallback(instruments.callbacks[i]!));
  }
}
