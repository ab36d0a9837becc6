/**
 * The watcher's view of svc, made of the emulator: each operation a test needs done the way svc
 * does it (deliveries that really fail, a day on svc's clock, a DELETE through its route), and the
 * watcher's requests read back. Only what the spec leaves open is injected: faults of the API, an
 * unlisted pausedReason, other timestamp formats.
 */
import type { ApiFault, FakeSvcOptions, StateTimeFormat } from '../../src/testing';
import { emulatedSvc, put, BOT_URL, SETUP_HEADER, type EmulatedSvc } from '../support/emulated-svc';

/** Which webhook: a board id, or 'bot'. */
export type Which = string;

export interface WatchedRequest {
  readonly method: string;
  readonly path: string;
  readonly which: Which | undefined;
  /** Real ms when it arrived. */
  readonly at: number;
  readonly status: number | undefined;
  readonly body: string;
}

/** A fault as the tests name it: `{ kind: 'timeout' }` is svc not answering; `on` is the method. */
export type Fault = (
  | { status: number; retryAfter?: string; body?: unknown }
  | { kind: 'timeout' | 'malformed-json' | 'not-object' | 'json-null' | 'empty' }
  | { fields: Record<string, unknown> }
) & { on?: 'ping' | 'GET' | 'PUT' | 'DELETE'; times?: number };

const DAY_MS = 24 * 60 * 60 * 1000;

export class EmulatedWebhooks {
  readonly #svc: EmulatedSvc;
  readonly #faults = new Map<Which, () => void>();
  /** The secret each webhook was last set up with, by this helper. */
  readonly #known = new Map<Which, string>();

  constructor(svc: EmulatedSvc) {
    this.#svc = svc;
    for (const [id, secret] of svc.secrets) this.#known.set(id, secret);
    this.#known.set('bot', svc.botSecret);
  }

  static async start(setup: { boards: number; forwardTo?: string; options?: FakeSvcOptions }): Promise<EmulatedWebhooks> {
    return new EmulatedWebhooks(await emulatedSvc(setup));
  }

  get emulator() {
    return this.#svc.svc;
  }
  get baseUrl(): string {
    return this.#svc.svc.baseUrl;
  }
  get personToken(): string {
    return this.#svc.svc.person.token;
  }
  get botToken(): string {
    return this.#svc.svc.bot.token;
  }
  get boardIds(): string[] {
    return this.#svc.boardIds;
  }

  /** The watcher's requests (this helper's own left out), in order. */
  get requests(): WatchedRequest[] {
    return this.#svc.requests().map((r) => {
      const path = r.url.split('?')[0]!;
      const board = /^\/api\/boards\/([^/]+)\/webhook/.exec(path);
      const which = path.startsWith('/api/bots/me/webhook') ? 'bot' : board ? decodeURIComponent(board[1]!) : undefined;
      return { method: r.method, path, which, at: r.receivedAt, status: r.status, body: r.body };
    });
  }

  /** Requests per method and route kind: `GET board`, `POST ping`. */
  get counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const r of this.requests) {
      const kind = `${r.method} ${r.path.endsWith('/ping') ? 'ping' : r.which === 'bot' ? 'bot' : 'board'}`;
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
    return counts;
  }

  /** The most of the watcher's requests svc was answering at once. */
  maxInFlight(): number {
    const edges = this.#svc.svc
      .requests()
      .filter((r) => r.headers[SETUP_HEADER] === undefined)
      .flatMap(
        (r) =>
          [
            [r.receivedAt, 1],
            [r.answeredAt ?? Number.POSITIVE_INFINITY, -1],
          ] as const,
      );
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    let most = 0;
    for (const [, step] of edges) most = Math.max(most, (now += step));
    return most;
  }

  /** PUTs by the watcher that would make svc generate a board secret, or carried another secret than the one the receiver holds. */
  get violations(): string[] {
    return this.requests
      .filter((r) => r.method === 'PUT' && r.which !== undefined)
      .flatMap((r) => {
        const { secret } = JSON.parse(r.body) as { secret?: string };
        if (secret === undefined || secret === '') return [`PUT of ${r.which} without a secret: svc generated a new one`];
        return secret === this.#known.get(r.which!) ? [] : [`PUT of ${r.which} with another secret than the one svc held`];
      });
  }

  /** The state svc answers, its times as ms. */
  webhook(which: Which): { url: string; enabled: boolean; failingSince: number | null; disabledAt: number | null; pending: number } | undefined {
    const view = which === 'bot' ? this.#svc.svc.webhook({ botId: this.#svc.svc.bot.id }) : this.#svc.svc.webhook({ boardId: which });
    if (view === undefined) return undefined;
    const ms = (t: string | null) => (t === null ? null : Date.parse(t));
    return { url: view.url, enabled: view.enabled, failingSince: ms(view.failingSince), disabledAt: ms(view.disabledAt), pending: view.pending };
  }

  /** The secret the webhook was last set up with here (the receiver's owner's record, not svc's answer). */
  knownSecret(which: Which): string {
    return this.#known.get(which)!;
  }

  /** Whether svc holds `secret` for the webhook. */
  holds(which: Which, secret: string): boolean {
    return which === 'bot' ? this.#svc.svc.secretMatches({ botId: this.#svc.svc.bot.id }, secret) : this.#svc.svc.secretMatches({ boardId: which }, secret);
  }

  /** The webhook is set again with `secret`, as an earlier PUT of the receiver's owner did. */
  async setSecret(which: Which, secret: string): Promise<void> {
    const bot = which === 'bot';
    await put(this.#svc.svc, bot ? '/api/bots/me/webhook' : `/api/boards/${which}/webhook`, bot ? this.botToken : this.personToken, {
      url: this.webhook(which)?.url ?? BOT_URL,
      secret,
    });
    this.#known.set(which, secret);
  }

  /**
   * svc's deliveries to the webhook fail from `since` (ms; default now) on: `events` events
   * emitted then, the receiver answering with `error` ("receiver answered 502: bad gateway" is a
   * 502 with that body; other text a 500 whose body svc quotes), svc's clock then brought to now.
   * svc's clock starts days back; a `since` it has passed already starts the failures at its
   * present and runs the clock that much further, ahead of ours.
   */
  async failDeliveries(which: Which, options: { error?: string; since?: number; events?: number } = {}): Promise<void> {
    const match = /^receiver answered (\d{3})(?:: (.*))?$/.exec(options.error ?? 'receiver answered 500');
    this.#svc.sink.status = match ? Number(match[1]) : 500;
    this.#svc.sink.body = match ? (match[2] ?? '') : (options.error ?? '');
    const svc = this.#svc.svc;
    const since = options.since ?? Math.max(svc.now(), Date.now());
    if (svc.now() <= since) {
      await svc.advance(since - svc.now());
      await this.enqueue(which, options.events ?? 1);
      await svc.advance(Math.max(0, Date.now() - since));
    } else {
      const lasting = svc.now() - since;
      await this.enqueue(which, options.events ?? 1);
      await svc.advance(lasting);
    }
  }

  /** A day of failures on svc's clock: svc disables the webhook. */
  async disable(which: Which): Promise<void> {
    await this.failDeliveries(which, { error: 'receiver answered 503', since: this.#svc.svc.now() - DAY_MS - 60_000 });
  }

  /** The receiver answers again: svc's next retry (within the hour) succeeds. */
  async succeedDelivery(which: Which): Promise<void> {
    this.#svc.sink.status = 200;
    this.#svc.sink.body = '';
    if (which === 'bot' || this.webhook(which)?.pending === 0) await this.enqueue(which, 1);
    await this.#svc.svc.advance(60 * 60 * 1000);
  }

  /** New events: queued unless paused or disabled, sent at once. */
  async enqueue(which: Which, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      if (which === 'bot') this.#svc.svc.emitBotUpdate({ kind: 'messageCreate' });
      else this.#svc.svc.emitBoardEvent({ type: 'task.updated', boardId: which });
    }
    await this.#svc.svc.advance(0);
  }

  setPlan(boardId: string, plan: 'business' | 'free'): void {
    this.#svc.svc.setPlan(plan, boardId);
  }

  /** A pausedReason the spec does not list is injected over the state; `PLAN` is the plan's own pause. */
  setPausedReason(boardId: string, reason: string): void {
    this.fault(boardId, undefined);
    if (reason === 'PLAN') this.setPlan(boardId, 'free');
    else this.fault(boardId, { fields: { pausedReason: reason } });
  }

  deleteWebhook(which: Which): Promise<void> {
    return this.#svc.deleteWebhook(which);
  }

  /** svc's routes for the webhook (or all, `*`) answer `fault` instead; undefined clears it. */
  fault(which: Which | '*', fault: Fault | undefined): void {
    this.#faults.get(which)?.();
    this.#faults.delete(which);
    if (fault === undefined) return;
    const { on, ...rest } = fault;
    const answer = ('kind' in rest && rest.kind === 'timeout' ? { ...rest, kind: 'no-answer' } : rest) as ApiFault;
    const scope = which === '*' ? 'all' : which === 'bot' ? 'bot' : { boardId: which };
    this.#faults.set(which, this.#svc.svc.injectApiFault({ ...answer, on: scope, ...(on === undefined ? {} : { method: on }) }));
  }

  setTimeFormat(format: StateTimeFormat): void {
    this.#svc.svc.setStateTimeFormat(format);
  }

  revokeToken(): void {
    this.#svc.svc.revokeToken(this.personToken);
  }

  now(): number {
    return this.#svc.svc.now();
  }

  advance(ms: number): Promise<void> {
    return this.#svc.svc.advance(ms);
  }

  close(): Promise<void> {
    return this.#svc.close();
  }
}
