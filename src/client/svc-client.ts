import { botTokenProblem } from './bot-token';
import type { BoardWebhookInput, BoardWebhookSetResult, BoardWebhookState, BotWebhookInput, BotWebhookState, PingResult, VersionInfo } from './setup-types';
import { SvcClientError } from './svc-client-error';
import { svcRequest, type SvcRequest, type Transport } from './svc-request';
import { isOAuthCredential, tokenKind } from './token-kinds';
import { checkWebhookSecret } from './webhook-secret';
import { checkWebhookUrl, isLoopbackHost } from './webhook-url';
import { readOptions } from '../internal/checks/option-table';
import { MAX_TIMEOUT_MS, SVC_CLIENT_OPTIONS } from './svc-client-options';

export { MAX_TIMEOUT_MS };

/** Options of `new SvcClient(options)`; docs/options.md lists them with their bounds. */
export interface SvcClientOptions {
  /** svc's base address, e.g. https://acme.svc.example.com; the route paths are appended to it. */
  baseUrl: string | URL;
  /**
   * The bearer token: a bot token for the bot webhook routes, or the token of a person with
   * MANAGE_BOARD and MANAGE_INTEGRATIONS for the board webhook routes. Not needed for `version()`.
   */
  token?: string;
  /** Per-call deadline in whole ms, at most 2147483647. Default 30000 (a ping waits for your receiver, up to 10 s). */
  timeoutMs?: number;
  /** A fetch implementation; default the global fetch of Node 20. */
  fetch?: typeof fetch;
  /**
   * Send the token over plain `http://` to a host other than this machine (loopback). Off by
   * default: anyone on the way could read the token. Turn it on only for a trusted private network.
   */
  allowInsecureHttp?: boolean;
}

/**
 * Whether `value` is a deadline a timer keeps: AbortSignal.timeout() takes whole milliseconds up
 * to MAX_TIMEOUT_MS, throws on a fraction and fires at once past the bound.
 */
export function isTimerDelay(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_TIMEOUT_MS;
}

/**
 * A typed client for svc's webhook setup routes and GET /api/version. The token is kept in a
 * private field (not enumerable, not printed by util.inspect) and is only ever sent in the
 * Authorization header. Inputs are checked locally before anything is sent.
 */
export class SvcClient {
  readonly #token: string | undefined;
  readonly #transport: Transport;

  constructor(options: SvcClientOptions) {
    const read = readOptions(SVC_CLIENT_OPTIONS, options, { factory: 'SvcClient' });
    this.#transport = {
      baseUrl: checkBaseUrl(read.baseUrl),
      timeoutMs: read.timeoutMs,
      fetch: read.fetch ?? globalThis.fetch,
    };
    if (read.token !== undefined) {
      checkTokenShape(read.token);
      if (!read.allowInsecureHttp) checkTokenTransport(this.#transport.baseUrl);
    }
    this.#token = read.token as string | undefined;
  }

  /** GET /api/version: unauthenticated; the token is not sent. */
  async version(): Promise<VersionInfo> {
    const { json } = await svcRequest(this.#transport, { method: 'GET', path: '/api/version' });
    return object<VersionInfo>(json, 'GET /api/version');
  }

  /** GET /api/bots/me/webhook; null when svc answers 404 (no webhook set). */
  async getBotWebhook(): Promise<BotWebhookState | null> {
    const json = await this.#orNull({ method: 'GET', path: '/api/bots/me/webhook', token: this.#botToken() });
    return json === null ? null : unwrapState<BotWebhookState>(json, 'GET /api/bots/me/webhook');
  }

  /** PUT /api/bots/me/webhook: sets, replaces or re-enables the bot webhook. */
  async setBotWebhook(input: BotWebhookInput): Promise<BotWebhookState> {
    const { url, secret } = input ?? {};
    const body = { url: checkWebhookUrl(url), secret: checkWebhookSecret(secret) };
    const token = this.#botToken();
    if (body.secret === token) throw new SvcClientError('invalid_secret', 'the webhook secret must not be the bot token');
    const { json } = await svcRequest(this.#transport, { method: 'PUT', path: '/api/bots/me/webhook', token, body });
    return unwrapState<BotWebhookState>(json, 'PUT /api/bots/me/webhook');
  }

  /** DELETE /api/bots/me/webhook: removes the webhook and drops its queue. */
  async deleteBotWebhook(): Promise<void> {
    await svcRequest(this.#transport, { method: 'DELETE', path: '/api/bots/me/webhook', token: this.#botToken() });
  }

  /** GET /api/boards/{id}/webhook; null when svc answers 404 (no webhook set). */
  async getBoardWebhook(boardId: string): Promise<BoardWebhookState | null> {
    const path = boardPath(boardId);
    const json = await this.#orNull({ method: 'GET', path, token: this.#personToken() });
    return json === null ? null : unwrapState<BoardWebhookState>(json, `GET ${path}`);
  }

  /**
   * PUT /api/boards/{id}/webhook. Without a secret svc generates one and returns it in this
   * response only, as `generatedSecret`.
   */
  async setBoardWebhook(boardId: string, input: BoardWebhookInput): Promise<BoardWebhookSetResult> {
    const path = boardPath(boardId);
    const { url, secret: given } = input ?? {};
    const body: { url: string; secret?: string } = { url: checkWebhookUrl(url) };
    // An empty secret asks svc to generate one, as leaving it out does.
    if (given !== undefined && given !== '') body.secret = checkWebhookSecret(given);
    const token = this.#personToken();
    if (body.secret === token) throw new SvcClientError('invalid_secret', 'the webhook secret must not be your token');
    const { json } = await svcRequest(this.#transport, { method: 'PUT', path, token, body });
    const response = object<Record<string, unknown>>(json, `PUT ${path}`);
    const { secret: nestedSecret, ...webhook } = unwrapState<BoardWebhookState>(response, `PUT ${path}`);
    const secret = typeof response.secret === 'string' ? response.secret : nestedSecret;
    return typeof secret === 'string' && secret !== '' ? { webhook, generatedSecret: secret } : { webhook };
  }

  /** DELETE /api/boards/{id}/webhook: removes the webhook; its queue is marked failed. */
  async deleteBoardWebhook(boardId: string): Promise<void> {
    await svcRequest(this.#transport, { method: 'DELETE', path: boardPath(boardId), token: this.#personToken() });
  }

  /**
   * POST /api/boards/{id}/webhook/ping: svc sends a `ping` event now and reports the receiver's
   * answer. At most once per 10 seconds per board; a second call throws `rate_limited`.
   */
  async pingBoardWebhook(boardId: string): Promise<PingResult> {
    const path = `${boardPath(boardId)}/ping`;
    const { json } = await svcRequest(this.#transport, { method: 'POST', path, token: this.#personToken() });
    const result = object<PingResult>(json, `POST ${path}`);
    if (typeof result.ok !== 'boolean') throw new SvcClientError('invalid_response', `POST ${path}: the answer has no boolean \`ok\``);
    return result;
  }

  /** A GET whose 404 means "no webhook"; a 2xx without a body is no state, never "no webhook". */
  async #orNull(request: SvcRequest): Promise<unknown> {
    let json: unknown;
    try {
      json = (await svcRequest(this.#transport, request)).json;
    } catch (err) {
      if (err instanceof SvcClientError && err.status === 404) return null;
      throw err;
    }
    if (json === undefined || json === null) throw new SvcClientError('invalid_response', `${request.method} ${request.path}: svc answered without a state`);
    return json;
  }

  /** The bot webhook routes are called by the bot itself, with its bot token. */
  #botToken(): string {
    const token = this.#requireToken('the bot webhook routes need the bot token');
    const problem = botTokenProblem(token);
    if (problem !== undefined) throw new SvcClientError('invalid_token', `the bot webhook routes need a bot token: ${problem}`);
    return token;
  }

  /** The board webhook routes are called by a person with MANAGE_BOARD and MANAGE_INTEGRATIONS. */
  #personToken(): string {
    const token = this.#requireToken('the board webhook routes need the token of a person who manages the board');
    if (tokenKind(token) === 'bot') {
      throw new SvcClientError('invalid_token', 'the board webhook routes are called by a person who manages the board, not with a bot token');
    }
    return token;
  }

  #requireToken(why: string): string {
    if (this.#token === undefined) throw new SvcClientError('invalid_token', `${why}; pass \`token\``);
    return this.#token;
  }
}

function checkBaseUrl(value: unknown): string {
  let url: URL;
  try {
    url = new URL(value instanceof URL ? value.href : String(value));
  } catch {
    throw new SvcClientError('invalid_base_url', 'baseUrl must be an absolute URL such as https://acme.svc.example.com');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new SvcClientError('invalid_base_url', 'baseUrl must use https:// (or http:// for a local server)');
  // Credentials or a query in the base would ride along on every call, and a token never goes in a URL.
  // An empty `?` or `#` is not in `search` or `hash` but stays in the href, where the routes would follow it.
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || /[?#]/.test(url.href)) {
    throw new SvcClientError('invalid_base_url', 'baseUrl must not carry credentials, a query or a fragment; the token goes in `token`');
  }
  return url.href;
}

/** A bearer token goes over plain http only to this machine, unless the caller opts in. */
function checkTokenTransport(baseUrl: string): void {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:') return;
  if (!isLoopbackHost(url.hostname)) {
    throw new SvcClientError(
      'invalid_base_url',
      'the token would travel unencrypted: use https:// (plain http:// is for a server on this machine; set allowInsecureHttp to send it to another host anyway)',
    );
  }
}

function checkTokenShape(token: unknown): void {
  // Whitespace or control characters would break (or inject into) the Authorization header, and
  // anything but printable ASCII cannot be sent in it at all.
  if (typeof token !== 'string' || token === '' || !/^[\x21-\x7e]+$/.test(token)) {
    throw new SvcClientError('invalid_token', 'the token must be a non-empty string of printable ASCII characters, without whitespace');
  }
  if (isOAuthCredential(tokenKind(token))) {
    throw new SvcClientError('invalid_token', 'OAuth tokens, codes and client credentials are not accepted by the svc REST API');
  }
}

function boardPath(boardId: unknown): string {
  if (typeof boardId !== 'string' || boardId.trim() === '') throw new SvcClientError('invalid_board_id', 'the board id is required');
  // `.` and `..` survive encodeURIComponent and would change the route; spaces around an id are a copying slip.
  if (boardId === '.' || boardId === '..' || boardId.trim() !== boardId) throw new SvcClientError('invalid_board_id', 'the board id is not a valid id');
  return `/api/boards/${encodeURIComponent(boardId)}/webhook`;
}

function object<T>(json: unknown, where: string): T {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new SvcClientError('invalid_response', `${where}: svc did not answer with a JSON object`);
  }
  return json as T;
}

/** The webhook state, whether svc wraps it in `webhook` (as the bot PUT does) or not. */
function unwrapState<T>(json: unknown, where: string): T {
  const body = object<Record<string, unknown>>(json, where);
  const inner = body.webhook;
  return (typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? inner : body) as T;
}
