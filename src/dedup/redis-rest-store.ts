import { readOptions } from '../internal/checks/option-table';
import { answeredWithin } from '../internal/runtime/timed-fetch';
import type { ClaimResult, DeliveryStore } from './delivery-store';
import { CLAIM_PREFIX, COMMIT_SCRIPT, DONE_VALUE, EXTEND_SCRIPT, RELEASE_SCRIPT, redisStoreKey } from './redis-scripts';
import { REDIS_REST_STORE_OPTIONS } from './store-options';

/** Options of `redisRestStore(options)`; docs/options.md lists them with their bounds. */
export interface RedisRestStoreOptions {
  /** The REST endpoint: Upstash's `UPSTASH_REDIS_REST_URL`, or any server that takes a command as a JSON array. */
  url: string;
  /** The REST token (`UPSTASH_REDIS_REST_TOKEN`), sent as `Authorization: Bearer`; never logged or put in an error. */
  token: string;
  /** Key prefix, as for `redisStore()`. Default `svc-webhooks:`. */
  prefix?: string;
  /** How long handled ids are kept, in ms. Default: one day plus an hour. */
  retentionMs?: number;
  /** Longest wait for one command, in ms; past it the delivery fails closed (503). Default 1000. */
  commandTimeoutMs?: number;
  /** The `fetch` the store calls; default the global one. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

const DONE: ClaimResult = Object.freeze({ state: 'done' });
const BUSY: ClaimResult = Object.freeze({ state: 'busy' });

/**
 * A de-dup store in Redis over HTTP, for runtimes without TCP sockets (Vercel Edge, Workers): the
 * Upstash REST protocol, one command per POST as a JSON array. Its keys, values and scripts are the
 * Redis store's, so receivers of both kinds on one Redis and prefix share their claims.
 */
export class RedisRestStore implements DeliveryStore {
  readonly retentionMs: number;
  private readonly url: string;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private readonly send: (input: string, init: RequestInit) => Promise<Response>;
  // A private slot, not a property: the token stays out of JSON.stringify and inspection of the store.
  readonly #authorization: string;

  constructor(options: RedisRestStoreOptions) {
    // Stryker disable next-line ObjectLiteral,StringLiteral: the factory's name reaches only the messages of setup errors (test/mutation/EQUIVALENT.core.md)
    const read = readOptions(REDIS_REST_STORE_OPTIONS, options, { factory: 'redisRestStore' });
    if (read.url === undefined || read.token === undefined) throw new TypeError('svc-webhooks: redisRestStore needs `url` and `token`');
    this.url = read.url;
    this.#authorization = `Bearer ${read.token}`;
    this.prefix = read.prefix;
    this.retentionMs = read.retentionMs;
    this.timeoutMs = read.commandTimeoutMs;
    const given = read.fetch;
    // Called unbound: the runtime's own fetch refuses another `this` (Workers' "Illegal invocation").
    this.send = given === undefined ? (input, init) => fetch(input, init) : (input, init) => given(input, init);
  }

  async claim(id: string, leaseMs: number): Promise<ClaimResult> {
    const token = crypto.randomUUID();
    let previous: unknown;
    try {
      previous = await this.command(['SET', this.key(id), CLAIM_PREFIX + token, 'PX', Math.ceil(leaseMs), 'NX', 'GET']);
    } catch (err) {
      // A slow server may still carry out the claim later, and over HTTP nothing orders a release
      // after it: release now, and again once the claim's request would have timed out at the
      // server too, so the delivery is not blocked for a whole lease by a claim nobody holds.
      this.release(id, token).catch(() => undefined);
      const again = setTimeout(() => void this.release(id, token).catch(() => undefined), this.timeoutMs) as { unref?: () => void };
      // On Node it must not keep a process alive that is done otherwise.
      // Stryker disable next-line OptionalChaining: Node's timers have unref; the optional call is for runtimes whose timers are numbers (test/mutation/EQUIVALENT.core.md)
      again.unref?.();
      throw err;
    }
    if (previous === null) return { state: 'claimed', token };
    return previous === DONE_VALUE ? DONE : BUSY;
  }

  async commit(id: string, token: string): Promise<void> {
    await this.command(['EVAL', COMMIT_SCRIPT, 1, this.key(id), CLAIM_PREFIX + token, DONE_VALUE, Math.ceil(this.retentionMs)]);
  }

  async release(id: string, token: string): Promise<void> {
    await this.command(['EVAL', RELEASE_SCRIPT, 1, this.key(id), CLAIM_PREFIX + token]);
  }

  async extend(id: string, token: string, leaseMs: number): Promise<void> {
    await this.command(['EVAL', EXTEND_SCRIPT, 1, this.key(id), CLAIM_PREFIX + token, Math.ceil(leaseMs)]);
  }

  /** Nothing to close: each command is a request of its own. */
  close(): void {}

  private key(id: string): string {
    return redisStoreKey(this.prefix, id);
  }

  /**
   * One command; an answer slower than the timeout fails (the request is aborted), so the delivery
   * fails closed well inside the sender's 10 s. Errors name the command, never the token.
   */
  private async command(args: ReadonlyArray<string | number>): Promise<unknown> {
    const name = String(args[0]);
    const init: RequestInit = {
      method: 'POST',
      headers: { Authorization: this.#authorization, 'Content-Type': 'application/json' },
      body: JSON.stringify(args.map(String)),
    };
    const token = this.#authorization.slice('Bearer '.length);
    return answeredWithin(
      (signal) => this.send(this.url, { ...init, signal }).then((response) => answerOf(response, name, token)),
      this.timeoutMs,
      () => `redis REST did not answer ${name} within ${this.timeoutMs} ms`,
    );
  }
}

/** The `result` of an answer; an `error`, a status that is not 2xx or a body that is not JSON throws. */
async function answerOf(response: Response, name: string, token: string): Promise<unknown> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    // Not JSON: no result, said below.
  }
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  // The server's words, for the log, with the token cut out should a server ever echo it.
  if (typeof error === 'string') throw new Error(`redis REST refused ${name}: ${error.split(token).join('[Redacted]').slice(0, 200)}`);
  if (!response.ok || typeof body !== 'object' || body === null || !('result' in body))
    throw new Error(`redis REST answered ${name} with HTTP ${response.status} and no result`);
  return (body as { result: unknown }).result;
}

/** The Redis de-dup store over REST: `store: redisRestStore({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN })`. */
export function redisRestStore(options: RedisRestStoreOptions): RedisRestStore {
  return new RedisRestStore(options);
}
