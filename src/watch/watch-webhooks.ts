import { isSvcClientError } from '../client/svc-client-error';
import { safeError } from '../internal/logging/safe-error';
import { listBoards } from './board-list';
import { ChangeLog } from './change-log';
import { classify, type Observation } from './classify-state';
import { describe } from './probe';
import { expectedUrlOf } from './expect-url';
import { PollSchedule, type NextPoll } from './poll-schedule';
import { Reenabler } from './reenable';
import { WatchMetrics } from './watch-metrics';
import { within } from './within';
import { watchSettings, type WatchOptions, type WatchSettings } from './watch-options';
import { webhookHealths, type WatchedWebhook, type WebhookChange, type WebhookStatus, type WebhookWatcher } from './watch-types';

/** Each poll's time is moved by up to this share of the interval, either way, so polls never bunch. */
const JITTER = 0.1;
/** 429s in a row before a webhook is reported unreachable (`rate_limited`) rather than kept as it was. */
const RATE_LIMITS_BEFORE_UNREACHABLE = 3;
/** When svc asks to wait without saying how long, and the longest wait taken from Retry-After. */
const DEFAULT_PAUSE_MS = 60_000;
const MAX_PAUSE_MS = 60 * 60 * 1000;
/** How soon a board list that could not be read is asked again. */
const LIST_RETRY_MS = 60_000;
/** A client call that has not settled by then is given up (an SvcClient's own deadline is shorter). */
const CALL_LIMIT_MS = 120_000;

interface Target {
  readonly key: string;
  readonly ref: WatchedWebhook;
  status: WebhookStatus | undefined;
  rateLimited: number;
}

/**
 * Watches the state svc reports for each webhook and reports every change of its health: a log
 * line at the level of what it means for events, `onChange`, and OpenTelemetry metrics. See
 * docs/never-silently-disabled.md.
 *
 * @example
 * const watcher = watchWebhooks({
 *   client: new SvcClient({ baseUrl: 'https://acme.svc.example.com', token: process.env.SVC_TOKEN }),
 *   boards: () => boardIds(),        // or a fixed list
 *   secret: ({ boardId }) => secretOf(boardId), // the receiver's resolver: only read to re-enable
 *   expectUrl: 'https://hooks.example.com/webhooks/board', // where svc should deliver; the only URL re-enabled
 *   reenable: true,
 * });
 */
export function watchWebhooks(options: WatchOptions): WebhookWatcher {
  return new Watcher(watchSettings(options));
}

class Watcher implements WebhookWatcher {
  private readonly targets = new Map<string, Target>();
  private boardOrder: readonly string[] = [];
  private readonly schedule: PollSchedule;
  private readonly log: ChangeLog;
  private readonly metrics: WatchMetrics;
  private readonly reenabler: Reenabler;
  private readonly listed: Promise<void>;
  private listTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly settings: WatchSettings) {
    this.schedule = new PollSchedule({ maxInFlight: settings.maxInFlight, maxRequestsPerSecond: settings.maxRequestsPerSecond, run: (key) => this.poll(key) });
    this.log = new ChangeLog(settings.logger, settings.intervalMs);
    this.metrics = new WatchMetrics(() => this.known());
    this.reenabler = new Reenabler(settings, settings.logger, this.metrics);
    if (settings.bot !== undefined) this.add({ webhook: 'bot' });
    this.listed = settings.boards === undefined ? Promise.resolve() : this.refresh();
    void this.checked().then(() => this.firstRound());
  }

  async checked(): Promise<void> {
    await this.listed;
    await this.schedule.checked();
  }

  statuses(): WebhookStatus[] {
    return [...this.known()];
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.listTimer);
    await this.schedule.close();
    this.log.close();
    this.metrics.close();
  }

  private *known(): Iterable<WebhookStatus> {
    for (const id of this.boardOrder) {
      const status = this.targets.get(`board:${id}`)?.status;
      if (status !== undefined) yield status;
    }
    const bot = this.targets.get('bot')?.status;
    if (bot !== undefined) yield bot;
  }

  private add(ref: WatchedWebhook): void {
    const key = ref.webhook === 'bot' ? 'bot' : `board:${ref.boardId}`;
    if (this.targets.has(key)) return;
    this.targets.set(key, { key, ref, status: undefined, rateLimited: 0 });
    this.schedule.add(key);
  }

  /** Reads the board list again: new boards are polled at once (within the budget), gone ones dropped. */
  private async refresh(): Promise<void> {
    const boards = this.settings.boards!;
    let next = this.settings.boardsRefreshMs;
    try {
      const { ids, skipped, truncated } = await listBoards(boards);
      if (this.closed) return;
      if (skipped > 0)
        this.log.limited('list-skipped', 'warn', {
          what: 'board lists with entries that are not board ids',
          fields: { skipped },
          message: `the board list holds ${skipped} entries that are not board ids; they are not watched`,
        });
      if (truncated)
        this.log.limited('list-truncated', 'warn', {
          what: 'board lists cut short',
          fields: { watched: ids.length },
          message: `the board list holds more than ${ids.length} boards; only the first ${ids.length} are watched`,
        });
      this.setBoards(ids);
    } catch (err) {
      next = Math.min(next, LIST_RETRY_MS);
      this.log.limited('list-failed', 'warn', {
        what: 'failures to read the board list',
        fields: { err: safeError(err), watched: this.boardOrder.length },
        message: `the board list could not be read (${describe(err)}); still watching the ${this.boardOrder.length} boards listed before`,
      });
    } finally {
      if (!this.closed && typeof boards === 'function') this.listTimer = setTimeout(() => void this.refresh(), next);
    }
  }

  private setBoards(ids: readonly string[]): void {
    const keep = new Set(ids);
    for (const id of this.boardOrder) {
      if (keep.has(id)) continue;
      const key = `board:${id}`;
      this.targets.delete(key);
      this.schedule.remove(key);
      this.reenabler.forget(key);
    }
    this.boardOrder = ids;
    for (const boardId of ids) this.add({ webhook: 'board', boardId });
    this.checkBudget();
  }

  /** Says so when the webhooks need more calls per second than the budget: each is then polled less often. */
  private checkBudget(): void {
    const { intervalMs, maxRequestsPerSecond } = this.settings;
    const needed = this.targets.size / (intervalMs / 1000);
    if (needed <= maxRequestsPerSecond) return;
    const every = Math.ceil(this.targets.size / maxRequestsPerSecond);
    this.log.limited('budget', 'warn', {
      what: 'budget warnings',
      fields: { watched: this.targets.size, intervalMs, maxRequestsPerSecond },
      message: `${this.targets.size} webhooks every ${intervalMs} ms need ${needed.toFixed(1)} calls per second, more than maxRequestsPerSecond (${maxRequestsPerSecond}): each is polled about every ${every} s instead`,
    });
  }

  /** One poll: svc's state, a change reported if its health changed, a re-enable if asked and due. */
  private async poll(key: string): Promise<NextPoll | undefined> {
    const target = this.targets.get(key);
    if (target === undefined || this.closed) return undefined;
    const observation = await this.observe(target.ref);
    if (this.closed || this.targets.get(key) !== target) return undefined;
    const pause = this.pauseFor(observation);
    if (isRateLimited(observation)) {
      // A 429 says nothing of the webhook: its last status stands, unless svc keeps refusing.
      if (++target.rateLimited < RATE_LIMITS_BEFORE_UNREACHABLE) return { inMs: pause!, polled: target.status !== undefined };
    } else {
      target.rateLimited = 0;
    }
    const expectedUrl = this.expected(target.ref);
    let { status, rawUrl } = classify({ target: target.ref, observation, previous: target.status, now: this.settings.now(), expectedUrl });
    this.record(target, status);
    if (this.settings.reenable && status.state === 'disabled') {
      const input = { key, target: target.ref, status, rawUrl, expectedUrl };
      if (await this.reenabler.attempt(input)) {
        const after = await this.observe(target.ref);
        ({ status, rawUrl } = classify({ target: target.ref, observation: after, previous: status, now: this.settings.now(), expectedUrl }));
        this.reenabler.reenabled(input, status);
        if (this.closed || this.targets.get(key) !== target) return undefined;
        this.record(target, status);
      }
    } else {
      this.reenabler.seen(key, status);
    }
    const base = status.state === 'missing' ? this.settings.missingIntervalMs : this.settings.intervalMs;
    return { inMs: Math.max(pause ?? 0, base * (1 + JITTER * (2 * Math.random() - 1))), polled: true };
  }

  /** The URL the webhook should deliver to, or undefined: not checked (a refused answer of `expectUrl` logged). */
  private expected(ref: WatchedWebhook): string | undefined {
    const { url, problem } = expectedUrlOf(this.settings.expectUrl, this.settings.bot?.expectUrl, ref);
    if (problem !== undefined)
      this.log.limited('expect-url', 'warn', {
        what: 'refused answers of expectUrl',
        fields: { webhook: ref.webhook, ...(ref.webhook === 'board' ? { boardId: ref.boardId } : {}) },
        message: `${ref.webhook === 'board' ? `board webhook of board ${ref.boardId}` : 'bot webhook'}: its URL is not checked: ${problem}`,
      });
    return url;
  }

  private async observe(ref: WatchedWebhook): Promise<Observation> {
    try {
      const body = await within(CALL_LIMIT_MS, 'the client', () =>
        ref.webhook === 'board' ? this.settings.client.getBoardWebhook(ref.boardId) : this.settings.bot!.client.getBotWebhook(),
      );
      return body === null || body === undefined ? { kind: 'missing' } : { kind: 'state', body };
    } catch (error) {
      return { kind: 'error', error };
    }
  }

  /** svc asked to wait (429, or 503 with Retry-After): no poll starts until then. */
  private pauseFor(observation: Observation): number | undefined {
    if (observation.kind !== 'error' || !isSvcClientError(observation.error)) return undefined;
    const { error } = observation;
    if (error.code !== 'rate_limited' && !(error.status === 503 && error.retryAfter !== undefined)) return undefined;
    const ms = Math.min(error.retryAfter === undefined ? DEFAULT_PAUSE_MS : error.retryAfter * 1000, MAX_PAUSE_MS);
    this.schedule.pauseFor(ms);
    return ms;
  }

  private record(target: Target, status: WebhookStatus): void {
    const previous = target.status;
    target.status = status;
    this.metrics.poll(status);
    if (previous !== undefined && healthKey(previous) === healthKey(status)) return;
    const change: WebhookChange = { previous, current: status };
    this.metrics.transition(change);
    this.log.change(change);
    if (this.settings.onChange === undefined) return;
    try {
      this.settings.onChange(change);
    } catch (err) {
      this.log.limited('onChange', 'error', { what: 'throws of onChange', fields: { err: safeError(err) }, message: 'onChange threw; the watcher goes on' });
    }
  }

  private firstRound(): void {
    if (this.closed) return;
    const counts = new Map<string, number>();
    for (const status of this.known()) counts.set(status.state, (counts.get(status.state) ?? 0) + 1);
    const parts = webhookHealths.filter((state) => counts.has(state)).map((state) => `${counts.get(state)} ${state}`);
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    this.settings.logger.info(
      { watched: total, ...Object.fromEntries(counts) },
      `watching ${total} webhooks: ${parts.join(', ') || 'none yet'}; one line per change of health from now on`,
    );
  }
}

function isRateLimited(observation: Observation): boolean {
  return observation.kind === 'error' && isSvcClientError(observation.error) && observation.error.code === 'rate_limited';
}

/** What counts as a change: the health, for a pause its reason, for a misdirected webhook where it points. */
function healthKey(status: WebhookStatus): string {
  if (status.state === 'paused') return `paused:${status.pausedReason}`;
  return status.state === 'misdirected' ? `misdirected:${status.url}` : status.state;
}
