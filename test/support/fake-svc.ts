/**
 * A stateful stand-in for svc's webhook routes, written from the spec's "States and transitions"
 * (not from src/), for the watcher's tests and bench. Each webhook goes through the spec's state
 * machine on a clock the test moves: deliveries that keep failing for a "day" (configurable)
 * disable it and drop its queue; a plan below Business pauses a board webhook (`pausedReason`
 * `PLAN`) and new events are not queued; DELETE gives 404s after; PUT re-enables. The ping route
 * allows one call per board per 10 s (429 with Retry-After beyond). Faults are injected per webhook:
 * any status (401, 403, 5xx, with Retry-After), no answer at all (a timeout), malformed JSON, a body
 * that is not an object, and any fields over the state (an unknown `pausedReason`, extra fields,
 * timestamps in other formats). It records every request, the most in flight at once, and any PUT
 * that would make svc generate a board secret (`violations`).
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeWebhook {
  url: string;
  secret: string;
  enabled: boolean;
  disabledAt: number | null;
  failingSince: number | null;
  lastOkAt: number | null;
  lastError: string | null;
  pending: number;
  pausedReason: string | null;
}

/** Which webhook: a board id, or 'bot'. */
export type Which = string;

/**
 * A fault answered instead of the route's answer. `times`: for that many requests (default: until
 * cleared); `on`: only for that method, or the ping route (default: every route of the webhook).
 */
export type Fault = ({ status: number; retryAfter?: string; body?: unknown } | { kind: 'timeout' | 'malformed-json' | 'not-object' | 'json-null' | 'empty' } | { fields: Record<string, unknown> }) & {
  times?: number;
  on?: 'GET' | 'PUT' | 'DELETE' | 'ping';
};

export type TimeFormat = 'iso' | 'epoch-seconds' | 'epoch-ms' | 'http-date' | 'proto' | 'garbage';

export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  /** The board id, or 'bot', or undefined for other routes. */
  readonly which: Which | undefined;
  readonly at: number;
  readonly body: string;
  readonly authorization: string | undefined;
  /** The status answered, once answered. */
  status?: number;
}

export interface FakeSvcOptions {
  /** How long deliveries fail before the webhook is disabled, in ms of the fake's clock. Default one day. */
  dayMs?: number;
  /** Where a ping is delivered: maps the registered https url to a local one (svc only delivers to public urls). */
  deliverTo?: (url: string) => string | undefined;
  /** Boards made at start, each with a webhook. Default 1. */
  boards?: number;
  /** Every answer waits this long (ms), so requests overlap. Default 0. */
  delayMs?: number;
  /** At most this many requests per second (per token), 429 with Retry-After beyond. Default none. */
  rateLimit?: { perSecond: number; retryAfterSeconds: number };
  /** Keep every request in `requests`. Default true (the bench turns it off). */
  record?: boolean;
}

export interface FakeSvc {
  readonly baseUrl: string;
  readonly personToken: string;
  readonly botToken: string;
  readonly boardIds: string[];
  readonly requests: FakeRequest[];
  /** Requests per method and route kind, counted even when not recorded: `GET board`, `POST ping`. */
  readonly counts: Map<string, number>;
  /** The most requests in flight at once. */
  readonly maxInFlight: () => number;
  /** PUTs that would make svc generate a board secret, or carried another secret than the stored one. */
  readonly violations: string[];
  webhook(which: Which): FakeWebhook | undefined;
  /** A new board the person manages, with a webhook unless `webhook: false`. */
  addBoard(options?: { webhook?: boolean }): string;
  /** Deliveries fail from now on, or from `since` (sets `failingSince` once, and `lastError`). */
  failDeliveries(which: Which, error?: string, since?: number): void;
  /** A delivery succeeds: `failingSince` cleared, `lastOkAt` now, one pending delivered. */
  succeedDelivery(which: Which): void;
  /** New events: queued unless paused or disabled. */
  enqueue(which: Which, count: number): void;
  /** The plan of a board's workspace: below Business pauses its webhook, Business resumes it. */
  setPlan(boardId: string, plan: 'business' | 'free'): void;
  /** A board webhook paused for a reason the spec does not list. */
  setPausedReason(boardId: string, reason: string | null): void;
  deleteWebhook(which: Which): void;
  /** The secret the webhook was registered with (as an earlier PUT would have set it). */
  setSecret(which: Which, secret: string): void;
  fault(which: Which | '*', fault: Fault | undefined): void;
  setTimeFormat(format: TimeFormat): void;
  /** The person's token is revoked: every board route answers 401. */
  revokeToken(): void;
  /** Moves the fake's clock (disabling and the ping limit read it). */
  advance(ms: number): void;
  now(): number;
  close(): Promise<void>;
}

const PING_INTERVAL_MS = 10_000;
const DAY_MS = 24 * 60 * 60 * 1000;

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers });
  res.end(text);
}

/** svc's version object (GET /api/version, unauthenticated). */
const VERSION = { version: '1.42.0', commit: 'a1b2c3d', license: 'AGPL-3.0-only', commercialLicense: 'https://svc.example.com/license', attribution: 'Powered by svc', url: 'https://svc.example.com', product: 'svc', planContact: 'sales@svc.example.com' };

export async function startFakeSvc(options: FakeSvcOptions = {}): Promise<FakeSvc> {
  const dayMs = options.dayMs ?? DAY_MS;
  const personToken = `person-${randomBytes(24).toString('hex')}`;
  const botId = randomUUID();
  const botToken = `svc_bot_${botId}_${randomBytes(32).toString('base64url')}`;
  let revoked = false;
  let offset = 0;
  let timeFormat: TimeFormat = 'iso';
  let inFlight = 0;
  let maxInFlight = 0;
  const record = options.record ?? true;
  const now = (): number => Date.now() + offset;
  const webhooks = new Map<Which, FakeWebhook | undefined>();
  const boardIds: string[] = [];
  const requests: FakeRequest[] = [];
  const counts = new Map<string, number>();
  const violations: string[] = [];
  const faults = new Map<string, Fault>();
  const lastPing = new Map<string, number>();
  const windowStarts: number[] = [];
  const held = new Set<ServerResponse>();

  const fresh = (url: string, secret: string): FakeWebhook => ({ url, secret, enabled: true, disabledAt: null, failingSince: null, lastOkAt: null, lastError: null, pending: 0, pausedReason: null });
  const addBoard = (opts: { webhook?: boolean } = {}): string => {
    const id = randomUUID();
    boardIds.push(id);
    webhooks.set(id, opts.webhook === false ? undefined : fresh(`https://hooks.example.com/webhooks/boards/${id}`, `board-secret-${randomBytes(16).toString('hex')}`));
    return id;
  };
  for (let i = 0; i < (options.boards ?? 1); i++) addBoard();
  webhooks.set('bot', fresh('https://bot.example.com/webhooks/bot', `bot-secret-${randomBytes(16).toString('hex')}`));

  /** The state machine's clock-driven step: a day of failures disables it and drops its queue. */
  function step(hook: FakeWebhook | undefined): void {
    if (hook === undefined || !hook.enabled || hook.failingSince === null) return;
    if (now() - hook.failingSince >= dayMs) {
      hook.enabled = false;
      hook.disabledAt = hook.failingSince + dayMs;
      hook.pending = 0;
    }
  }

  function time(ms: number | null): unknown {
    if (ms === null) return null;
    switch (timeFormat) {
      case 'epoch-seconds':
        return Math.floor(ms / 1000);
      case 'epoch-ms':
        return ms;
      case 'http-date':
        return new Date(ms).toUTCString();
      case 'proto':
        return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 };
      case 'garbage':
        return `sometime around ${ms}`;
      default:
        return new Date(ms).toISOString();
    }
  }

  function state(which: Which, hook: FakeWebhook): Record<string, unknown> {
    const common = { url: hook.url, enabled: hook.enabled, disabledAt: time(hook.disabledAt), failingSince: time(hook.failingSince), lastOkAt: time(hook.lastOkAt), lastError: hook.lastError, pending: hook.pending };
    return which === 'bot' ? common : { ...common, hasSecret: hook.secret !== '', pausedReason: hook.pausedReason };
  }

  /** The fault for this request, counted down. */
  function faultFor(which: Which | undefined, route: string): Fault | undefined {
    for (const key of [which, '*']) {
      if (key === undefined) continue;
      const fault = faults.get(key);
      if (fault === undefined || (fault.on !== undefined && fault.on !== route)) continue;
      if (fault.times !== undefined && --fault.times <= 0) faults.delete(key);
      return fault;
    }
    return undefined;
  }

  function answerFault(res: ServerResponse, fault: Fault, which: Which, hook: FakeWebhook | undefined): void {
    if ('status' in fault) return send(res, fault.status, fault.body ?? { code: 'error', message: `fault ${fault.status}` }, fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter });
    if ('fields' in fault) return send(res, 200, { ...(hook === undefined ? {} : state(which, hook)), ...fault.fields });
    if (fault.kind === 'timeout') {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    if (fault.kind === 'malformed-json') return send(res, 200, '{"enabled": tru');
    if (fault.kind === 'not-object') return send(res, 200, '[1, 2, 3]');
    if (fault.kind === 'json-null') return send(res, 200, 'null');
    return send(res, 200, '');
  }

  function rateLimited(): boolean {
    const limit = options.rateLimit;
    if (limit === undefined) return false;
    const t = Date.now();
    while (windowStarts.length > 0 && t - windowStarts[0]! >= 1000) windowStarts.shift();
    if (windowStarts.length >= limit.perSecond) return true;
    windowStarts.push(t);
    return false;
  }

  async function ping(hook: FakeWebhook, boardId: string): Promise<{ ok: boolean; status: number; error: string }> {
    const body = JSON.stringify({
      id: randomUUID(),
      type: 'ping',
      version: 1,
      sequence: 0,
      occurred_at: new Date().toISOString(),
      workspace_id: randomUUID(),
      board: { id: boardId, key: 'ENG', name: 'Engineering' },
      actor: null,
      rule: null,
      changes: [],
      task: null,
      comment: null,
      task_url: '',
    });
    const target = options.deliverTo?.(hook.url);
    if (target === undefined) return { ok: false, status: 0, error: 'dial tcp: connection refused' };
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac('sha256', hook.secret).update(`${timestamp}.${body}`).digest('hex');
    try {
      const res = await fetch(target, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(10_000),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Svc-Webhook/1.0',
          'x-svc-webhook-version': '1',
          'x-svc-event': 'ping',
          'x-svc-delivery': JSON.parse(body).id,
          'x-svc-timestamp': timestamp,
          'x-svc-signature': `v1=${signature}`,
        },
        body,
      });
      await res.text();
      const ok = res.status >= 200 && res.status < 300;
      if (ok) hook.lastOkAt = now();
      return { ok, status: res.status, error: ok ? '' : `receiver answered ${res.status}` };
    } catch (err) {
      return { ok: false, status: 0, error: String(err) };
    }
  }

  function authorised(req: IncomingMessage, which: Which): boolean {
    const header = req.headers.authorization ?? '';
    return which === 'bot' ? header === `Bearer ${botToken}` : !revoked && header === `Bearer ${personToken}`;
  }

  async function route(req: IncomingMessage, res: ServerResponse, text: string, which: Which | undefined, isPing: boolean): Promise<void> {
    const method = req.method ?? 'GET';
    if (which === undefined && method === 'GET' && (req.url ?? '').split('?')[0] === '/api/version') return send(res, 200, VERSION);
    if (which === undefined) return send(res, 404, { code: 'not_found', message: 'no such route' });
    if (!authorised(req, which)) return send(res, 401, { code: 'unauthorized', message: 'invalid token' });
    if (which !== 'bot' && !webhooks.has(which)) return send(res, 404, { code: 'not_found', message: 'no such board' });
    if (rateLimited()) return send(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'retry-after': String(options.rateLimit!.retryAfterSeconds) });
    const hook = webhooks.get(which);
    step(hook);
    const fault = faultFor(which, isPing ? 'ping' : method);
    if (fault !== undefined) return answerFault(res, fault, which, hook);
    if (isPing) {
      const last = lastPing.get(which);
      if (last !== undefined && now() - last < PING_INTERVAL_MS) {
        return send(res, 429, { code: 'rate_limited', message: 'ping at most once per 10 seconds' }, { 'retry-after': String(Math.ceil((PING_INTERVAL_MS - (now() - last)) / 1000)) });
      }
      if (hook === undefined) return send(res, 404, { code: 'not_found', message: 'no webhook' });
      lastPing.set(which, now());
      return send(res, 200, await ping(hook, which));
    }
    if (method === 'GET') {
      if (hook === undefined) return send(res, 404, { code: 'not_found', message: 'no webhook' });
      return send(res, 200, which === 'bot' ? { webhook: state(which, hook) } : state(which, hook));
    }
    if (method === 'DELETE') {
      webhooks.set(which, undefined);
      return send(res, 204);
    }
    if (method !== 'PUT') return send(res, 405, { code: 'method_not_allowed', message: 'method not allowed' });
    const body = JSON.parse(text) as { url?: unknown; secret?: unknown };
    if (typeof body.url !== 'string' || !body.url.startsWith('https://')) return send(res, 400, { code: 'invalid_url', message: 'url must use https' });
    const given = typeof body.secret === 'string' && body.secret !== '';
    if (!given && which === 'bot') return send(res, 400, { code: 'invalid_secret', message: 'secret is required' });
    if (!given) violations.push(`PUT of board ${which} without a secret: svc generated a new one`);
    else if (hook !== undefined && body.secret !== hook.secret) violations.push(`PUT of ${which} with another secret than the one svc held`);
    const secret = given ? (body.secret as string) : randomBytes(32).toString('base64url');
    const next = fresh(body.url, secret);
    if (hook !== undefined) {
      next.lastOkAt = hook.lastOkAt;
      next.pausedReason = hook.pausedReason;
    }
    webhooks.set(which, next);
    const answer = state(which, next);
    return send(res, 200, which === 'bot' ? { webhook: answer } : given ? answer : { ...answer, secret });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0]!;
      const board = /^\/api\/boards\/([^/]+)\/webhook(\/ping)?$/.exec(path);
      const which = path === '/api/bots/me/webhook' ? 'bot' : board ? decodeURIComponent(board[1]!) : undefined;
      const isPing = board?.[2] === '/ping' && req.method === 'POST';
      const kind = `${req.method} ${isPing ? 'ping' : which === 'bot' ? 'bot' : which === undefined ? 'other' : 'board'}`;
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      if (record) {
        const entry: FakeRequest = { method: req.method ?? '', path, which, at: now(), body, authorization: req.headers.authorization };
        requests.push(entry);
        res.on('finish', () => (entry.status = res.statusCode));
      }
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on('close', () => inFlight--);
      const go = () => route(req, res, body, which, isPing).catch((err: unknown) => send(res, 500, { code: 'internal', message: String(err) }));
      if (options.delayMs) setTimeout(go, options.delayMs);
      else void go();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const need = (which: Which): FakeWebhook => {
    const hook = webhooks.get(which);
    if (hook === undefined) throw new Error(`fake svc: no webhook for ${which}`);
    return hook;
  };

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    personToken,
    botToken,
    boardIds,
    requests,
    counts,
    maxInFlight: () => maxInFlight,
    violations,
    webhook: (which) => webhooks.get(which),
    addBoard,
    failDeliveries(which, error = 'receiver answered 500', since = now()) {
      const hook = need(which);
      hook.failingSince ??= since;
      hook.lastError = error;
    },
    succeedDelivery(which) {
      const hook = need(which);
      hook.failingSince = null;
      hook.lastError = null;
      hook.lastOkAt = now();
      hook.pending = Math.max(0, hook.pending - 1);
    },
    enqueue(which, count) {
      const hook = need(which);
      step(hook);
      if (hook.enabled && hook.pausedReason === null) hook.pending += count;
    },
    setPlan(boardId, plan) {
      need(boardId).pausedReason = plan === 'business' ? null : 'PLAN';
    },
    setPausedReason(boardId, reason) {
      need(boardId).pausedReason = reason;
    },
    deleteWebhook(which) {
      webhooks.set(which, undefined);
    },
    setSecret(which, secret) {
      need(which).secret = secret;
    },
    fault(which, fault) {
      if (fault === undefined) faults.delete(which);
      else faults.set(which, { ...fault });
    },
    setTimeFormat(format) {
      timeFormat = format;
    },
    revokeToken() {
      revoked = true;
    },
    advance(ms) {
      offset += ms;
      for (const hook of webhooks.values()) step(hook);
    },
    now,
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve();
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
