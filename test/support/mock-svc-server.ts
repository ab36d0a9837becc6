/**
 * A local stand-in for svc's webhook setup routes and GET /api/version, written from the spec
 * (not from src/client), for the client and CLI tests. It enforces what svc enforces: bearer
 * tokens of the right kind, https public webhook urls, 16..256-character secrets, a generated
 * board secret returned once, and at most one ping per board per 10 seconds (429 beyond).
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BlockList, isIP } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

interface WebhookRecord {
  url: string;
  secret: string;
  enabled: boolean;
  disabledAt: string | null;
  failingSince: string | null;
  lastOkAt: string | null;
  lastError: string | null;
  pending: number;
}

export interface MockSvcOptions {
  /** GET /api/bots/me/webhook wraps the state in `webhook`, as PUT does (the spec leaves it open). Default true. */
  wrapBotGet?: boolean;
  /**
   * Where a ping is really sent. svc only delivers to public https urls, which a test cannot
   * serve; this maps the registered url to a local one (like a tunnel). Default: not sent, and
   * the ping reports a connection error.
   */
  deliverTo?: (url: string) => string | undefined;
}

export interface MockSvc {
  readonly baseUrl: string;
  readonly botId: string;
  /** The bot's token, `svc_bot_<botId>_<43 chars>`. */
  readonly botToken: string;
  /** A token of a person who manages the board (opaque). */
  readonly personToken: string;
  readonly boardId: string;
  /** Adds another board the person manages; returns its id. */
  addBoard(): string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** The stored bot webhook (secret included), or undefined. */
  botWebhook(): WebhookRecord | undefined;
  boardWebhook(boardId?: string): WebhookRecord | undefined;
  /** Disables a webhook as a day of failed deliveries would. */
  disable(which: 'bot' | 'board'): void;
  /** Moves the mock's clock forward (the ping rate limit reads it). */
  advance(ms: number): void;
  close(): Promise<void>;
}

const PING_INTERVAL_MS = 10_000;
const DELIVERY_TIMEOUT_MS = 10_000;

const PRIVATE = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16]] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [['::1', 128], ['::', 128], ['fc00::', 7], ['fe80::', 10]] as const) PRIVATE.addSubnet(net, bits, 'ipv6');

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function refusedUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'url is required';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'url is not a URL';
  }
  if (url.protocol !== 'https:') return 'url must use https';
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return 'url points to localhost';
  const family = isIP(host);
  if (family !== 0 && PRIVATE.check(host, family === 4 ? 'ipv4' : 'ipv6')) return 'url points to a private address';
  return undefined;
}

function secretProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length < 16 || value.length > 256) return 'secret must be 16 to 256 characters';
  return undefined;
}

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers });
  res.end(text);
}

export async function startMockSvc(options: MockSvcOptions = {}): Promise<MockSvc> {
  const botId = randomUUID();
  const botToken = `svc_bot_${botId}_${randomBytes(32).toString('base64url')}`;
  const personToken = `person-${randomBytes(24).toString('hex')}`;
  const boardId = randomUUID();
  const managed = new Set<string>([boardId]);
  const requests: RecordedRequest[] = [];
  let bot: WebhookRecord | undefined;
  const boards = new Map<string, WebhookRecord>();
  const lastPing = new Map<string, number>();
  let offset = 0;
  const now = (): number => Date.now() + offset;

  const fresh = (url: string, secret: string): WebhookRecord => ({
    url,
    secret,
    enabled: true,
    disabledAt: null,
    failingSince: null,
    lastOkAt: null,
    lastError: null,
    pending: 0,
  });
  const botState = (w: WebhookRecord) => {
    const { secret: _secret, ...state } = w;
    return state;
  };
  const boardState = (w: WebhookRecord) => ({ ...botState(w), hasSecret: w.secret !== '', pausedReason: null });

  function bearer(req: IncomingMessage): string {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer (\S+)$/.exec(header);
    if (!match) throw new HttpError(401, 'unauthorized', 'missing bearer token');
    return match[1]!;
  }

  function requireBot(req: IncomingMessage): void {
    const token = bearer(req);
    // The spec's rule: the bot is found by the id inside the token, then the whole token is checked.
    const match = /^svc_bot_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_[A-Za-z0-9_-]{43}$/.exec(token);
    if (!match || match[1] !== botId || token !== botToken) throw new HttpError(401, 'unauthorized', 'invalid bot token');
  }

  function requirePerson(req: IncomingMessage, id: string): void {
    const token = bearer(req);
    if (token.startsWith('svc_bot_')) throw new HttpError(403, 'forbidden', 'board webhooks are managed by people, not bots');
    if (token !== personToken) throw new HttpError(401, 'unauthorized', 'invalid token');
    if (!managed.has(id)) throw new HttpError(404, 'not_found', 'no such board');
  }

  function parseBody(text: string): Record<string, unknown> {
    try {
      const body: unknown = JSON.parse(text);
      if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
    } catch {
      // answered below
    }
    throw new HttpError(400, 'invalid_body', 'body must be a JSON object');
  }

  function checkPut(body: Record<string, unknown>, secretOptional: boolean): void {
    const urlProblem = refusedUrl(body.url);
    if (urlProblem) throw new HttpError(400, 'invalid_url', urlProblem);
    const secret = body.secret;
    if (secretOptional && (secret === undefined || secret === '')) return;
    const problem = secretProblem(secret);
    if (problem) throw new HttpError(400, 'invalid_secret', problem);
  }

  async function ping(hook: WebhookRecord, pinged: string): Promise<{ ok: boolean; status: number; error: string }> {
    const event = {
      id: randomUUID(),
      type: 'ping',
      version: 1,
      sequence: 0,
      occurred_at: new Date(now()).toISOString(),
      workspace_id: randomUUID(),
      board: { id: pinged, key: 'ENG', name: 'Engineering' },
      actor: null,
      rule: null,
      changes: [],
      task: null,
      comment: null,
      task_url: '',
    };
    const body = JSON.stringify(event);
    const timestamp = String(Math.floor(now() / 1000));
    const signature = createHmac('sha256', hook.secret).update(`${timestamp}.${body}`).digest('hex');
    const target = options.deliverTo?.(hook.url);
    if (target === undefined) return { ok: false, status: 0, error: 'connection refused' };
    try {
      const res = await fetch(target, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Svc-Webhook/1.0',
          'x-svc-webhook-version': '1',
          'x-svc-event': 'ping',
          'x-svc-delivery': event.id,
          'x-svc-timestamp': timestamp,
          'x-svc-signature': `v1=${signature}`,
        },
        body,
      });
      const text = await res.text();
      const ok = res.status >= 200 && res.status < 300;
      if (ok) hook.lastOkAt = new Date(now()).toISOString();
      return { ok, status: res.status, error: ok ? '' : `receiver answered ${res.status}: ${text.slice(0, 200)}` };
    } catch (err) {
      return { ok: false, status: 0, error: String(err) };
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse, text: string): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const method = req.method ?? 'GET';
    if (path === '/api/version' && method === 'GET') {
      send(res, 200, {
        version: '1.42.0',
        commit: 'a1b2c3d',
        license: 'AGPL-3.0-only',
        commercialLicense: 'https://svc.example.com/license',
        attribution: 'Powered by svc',
        url: 'https://svc.example.com',
        product: 'svc',
        planContact: 'sales@svc.example.com',
      });
      return;
    }
    if (path === '/api/bots/me/webhook') {
      requireBot(req);
      if (method === 'GET') {
        if (!bot) throw new HttpError(404, 'not_found', 'no webhook');
        send(res, 200, options.wrapBotGet === false ? botState(bot) : { webhook: botState(bot) });
      } else if (method === 'PUT') {
        const body = parseBody(text);
        checkPut(body, false);
        bot = fresh(body.url as string, body.secret as string);
        send(res, 200, { webhook: botState(bot) });
      } else if (method === 'DELETE') {
        bot = undefined;
        send(res, 204);
      } else throw new HttpError(405, 'method_not_allowed', 'method not allowed');
      return;
    }
    const board = /^\/api\/boards\/([^/]+)\/webhook(\/ping)?$/.exec(path);
    if (board) {
      const id = decodeURIComponent(board[1]!);
      requirePerson(req, id);
      const hook = boards.get(id);
      if (board[2] === '/ping') {
        if (method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'method not allowed');
        const last = lastPing.get(id);
        if (last !== undefined && now() - last < PING_INTERVAL_MS) {
          const wait = Math.ceil((PING_INTERVAL_MS - (now() - last)) / 1000);
          send(res, 429, { code: 'rate_limited', message: 'ping at most once per 10 seconds' }, { 'retry-after': String(wait) });
          return;
        }
        if (!hook) throw new HttpError(404, 'not_found', 'no webhook');
        lastPing.set(id, now());
        send(res, 200, await ping(hook, id));
      } else if (method === 'GET') {
        if (!hook) throw new HttpError(404, 'not_found', 'no webhook');
        send(res, 200, boardState(hook));
      } else if (method === 'PUT') {
        const body = parseBody(text);
        checkPut(body, true);
        const given = typeof body.secret === 'string' && body.secret !== '';
        const secret = given ? (body.secret as string) : randomBytes(32).toString('base64url');
        const record = fresh(body.url as string, secret);
        boards.set(id, record);
        send(res, 200, given ? boardState(record) : { ...boardState(record), secret });
      } else if (method === 'DELETE') {
        boards.delete(id);
        send(res, 204);
      } else throw new HttpError(405, 'method_not_allowed', 'method not allowed');
      return;
    }
    throw new HttpError(404, 'not_found', 'no such route');
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      route(req, res, body).catch((err: unknown) => {
        if (err instanceof HttpError) send(res, err.status, { code: err.code, message: err.message });
        else send(res, 500, { code: 'internal', message: String(err) });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    botId,
    botToken,
    personToken,
    boardId,
    addBoard() {
      const id = randomUUID();
      managed.add(id);
      return id;
    },
    requests,
    botWebhook: () => bot,
    boardWebhook: (id = boardId) => boards.get(id),
    disable(which) {
      const hook = which === 'bot' ? bot : boards.get(boardId);
      if (!hook) throw new Error(`no ${which} webhook to disable`);
      hook.enabled = false;
      hook.disabledAt = new Date(now()).toISOString();
    },
    advance(ms) {
      offset += ms;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
