import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DeliveryAudit } from './audit';
import type { EmulatorClock } from './clock';
import type { DeliveryEngine } from './delivery-engine';
import type { Directory } from './directory';
import { boardEventBody, botUpdateBody, pingBody, type BoardEmit, type BotEmit } from './emitted-events';
import { FakeSvcError } from './emulator-error';
import { ApiRefusal } from './http-answer';
import { secretProblem, urlProblem } from './rules';
import { endQueue, newWebhook, viewOf, type BoardWebhookView, type BotWebhookView, type StateTimeFormat, type WebhookRecord } from './webhook-record';

/** svc allows one ping per board per 10 seconds. */
const PING_INTERVAL_MS = 10_000;

/** What one emitted event became: its delivery id, its sequence (board events) and whether it was queued. */
export interface Emitted {
  readonly id: string;
  readonly sequence: number | null;
  /** False when svc would not queue it: no webhook, disabled, or paused by the plan. */
  readonly queued: boolean;
}

/** What the core is built from. */
export interface CoreParts {
  readonly directory: Directory;
  readonly engine: DeliveryEngine;
  readonly clock: EmulatorClock;
  readonly audit: DeliveryAudit;
  readonly allowLoopback: boolean;
}

/** svc's webhooks, apart from HTTP: the state machine of the spec, for the routes and the control API. */
export class EmulatorCore {
  readonly parts: CoreParts;
  /** How GET writes the state's timestamps. */
  timeFormat: StateTimeFormat = 'iso';
  readonly #boardHooks = new Map<string, WebhookRecord>();
  readonly #botHooks = new Map<string, WebhookRecord>();
  readonly #sequences = new Map<string, number>();
  readonly #lastPing = new Map<string, number>();

  constructor(parts: CoreParts) {
    this.parts = parts;
  }

  /** The webhook of a board or bot, if it has one. */
  hook(kind: 'board' | 'bot', ownerId: string): WebhookRecord | undefined {
    return (kind === 'board' ? this.#boardHooks : this.#botHooks).get(ownerId);
  }

  /** The state GET answers, or undefined when there is no webhook. */
  view(kind: 'board' | 'bot', ownerId: string): BotWebhookView | BoardWebhookView | undefined {
    const hook = this.hook(kind, ownerId);
    return hook === undefined ? undefined : viewOf(hook, this.timeFormat);
  }

  /** Whether the webhook holds `candidate` as its secret, compared in constant time. */
  secretMatches(kind: 'board' | 'bot', ownerId: string, candidate: string): boolean {
    const hook = this.hook(kind, ownerId);
    if (hook === undefined || typeof candidate !== 'string') return false;
    const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
    return timingSafeEqual(digest(hook.secret), digest(candidate));
  }

  /** PUT: creates, replaces or re-enables; a board PUT with no secret gets one generated, returned once. */
  put(kind: 'board' | 'bot', ownerId: string, body: Record<string, unknown>): { view: BotWebhookView | BoardWebhookView; generated?: string } {
    const badUrl = urlProblem(body.url, this.parts.allowLoopback);
    if (badUrl !== undefined) throw new ApiRefusal(400, 'invalid_url', badUrl);
    const generate = kind === 'board' && (body.secret === undefined || body.secret === '' || body.secret === null);
    const badSecret = generate ? undefined : secretProblem(body.secret);
    if (badSecret !== undefined) throw new ApiRefusal(400, 'invalid_secret', badSecret);
    const secret = generate ? randomBytes(32).toString('base64url') : (body.secret as string);
    const hooks = kind === 'board' ? this.#boardHooks : this.#botHooks;
    const old = hooks.get(ownerId);
    let hook: WebhookRecord;
    if (old === undefined || !old.enabled) {
      hook = newWebhook({ kind, ownerId, url: body.url as string, secret });
      if (old !== undefined) Object.assign(hook, { lastOkAt: old.lastOkAt, lastError: old.lastError });
      hooks.set(ownerId, hook);
    } else {
      // Replacing an enabled webhook keeps its queue and state; what is still queued goes to the new url, signed with the new secret.
      hook = Object.assign(old, { url: body.url as string, secret });
    }
    return { view: viewOf(hook, this.timeFormat), ...(generate ? { generated: secret } : {}) };
  }

  /** DELETE: the bot webhook's queue is dropped, the board webhook's marked failed. */
  delete(kind: 'board' | 'bot', ownerId: string): void {
    const hooks = kind === 'board' ? this.#boardHooks : this.#botHooks;
    const hook = hooks.get(ownerId);
    if (hook === undefined) return;
    endQueue(hook, kind === 'bot' ? 'dropped' : 'failed');
    hooks.delete(ownerId);
  }

  /** POST …/ping: 429 within 10 s of the last ping of the board, else a `ping` event sent at once. */
  async ping(boardId: string): Promise<{ ok: boolean; status: number; error: string }> {
    const board = this.parts.directory.board(boardId);
    const now = this.parts.clock.now();
    const last = this.#lastPing.get(boardId);
    if (last !== undefined && now - last < PING_INTERVAL_MS) {
      const wait = Math.ceil((PING_INTERVAL_MS - (now - last)) / 1000);
      throw new ApiRefusal(429, 'rate_limited', 'ping at most once per 10 seconds per board', { 'retry-after': String(wait) });
    }
    const hook = this.#boardHooks.get(boardId);
    if (hook === undefined) throw new ApiRefusal(404, 'not_found', 'the board has no webhook');
    this.#lastPing.set(boardId, now);
    const body = pingBody(board);
    return this.parts.engine.ping(hook, { id: body.id as string, kind: 'board', ownerId: boardId, eventType: 'ping', sequence: 0, body: JSON.stringify(body) });
  }

  /** A change on a board: the event takes the board's next `sequence` and is queued unless svc would not. */
  emitBoardEvent(boardId: string, input: BoardEmit): Emitted {
    const board = this.parts.directory.board(boardId);
    const sequence = (this.#sequences.get(boardId) ?? 0) + 1;
    const body = boardEventBody(board, { ...input, sequence });
    this.#sequences.set(boardId, sequence);
    const hook = this.#boardHooks.get(boardId);
    const id = body.id as string;
    const queued = hook !== undefined && this.#queue(hook, { id, eventType: input.type, sequence, body: JSON.stringify(body) });
    return { id, sequence, queued };
  }

  /** An event for a bot: queued on its webhook unless svc would not. */
  emitBotUpdate(botId: string, input: BotEmit): Emitted {
    if (!this.parts.directory.hasBot(botId)) throw new FakeSvcError('not_found', `no bot ${JSON.stringify(botId)}`);
    const body = botUpdateBody(botId, input);
    const hook = this.#botHooks.get(botId);
    const id = body.id as string;
    const queued = hook !== undefined && this.#queue(hook, { id, eventType: input.kind, sequence: null, body: JSON.stringify(body) });
    return { id, sequence: null, queued };
  }

  /** The plan of a board's workspace: below Business pauses the board's webhook, Business resumes it with new events. */
  setPlan(boardId: string, plan: 'business' | 'free'): void {
    if (plan !== 'business' && plan !== 'free') throw new FakeSvcError('invalid_input', 'plan is business or free');
    const board = this.parts.directory.board(boardId);
    for (const other of this.parts.directory.boards.values()) {
      if (other.workspaceId !== board.workspaceId) continue;
      other.plan = plan;
      const hook = this.#boardHooks.get(other.id);
      if (hook === undefined) continue;
      hook.pausedReason = plan === 'business' ? null : 'PLAN';
      if (plan === 'business') this.parts.engine.resume(hook);
    }
  }

  #queue(hook: WebhookRecord, input: { id: string; eventType: string; sequence: number | null; body: string }): boolean {
    return this.parts.engine.enqueue(hook, {
      ...input,
      kind: hook.kind,
      ownerId: hook.ownerId,
      createdAt: this.parts.clock.now(),
      attempts: 0,
      status: 'pending',
    });
  }
}
