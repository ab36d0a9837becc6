import { numberOption, readOptions, stringOption } from '../internal/checks/option-table';
import { answeredWithin } from '../internal/runtime/timed-fetch';
import type { ClaimResult, DeliveryStore } from './delivery-store';
import type { DedupClaimAnswer, DedupCommand } from './durable-object-claims';
import { REDIS_REST_STORE_OPTIONS } from './store-options';

/** The declaration of every `durableObjectStore()` option (docs/options.md is made from it). */
export const DURABLE_OBJECT_STORE_OPTIONS = {
  shards: numberOption({
    doc: 'How many Durable Objects the ids are spread over, by a hash of the id. Another count moves ids to other objects: set it once, before deliveries flow.',
    unit: 'count',
    default: 16,
    min: 1,
    max: 1024,
  }),
  prefix: stringOption({ doc: 'Names the objects: stores on one namespace with the same prefix share their claims.', default: 'svc-webhooks:' }),
  retentionMs: REDIS_REST_STORE_OPTIONS.retentionMs,
  commandTimeoutMs: numberOption({
    doc: "Longest wait for one Durable Object's answer; past it the delivery fails closed (503 `store_unavailable`).",
    unit: 'ms',
    default: 1000,
    min: 0,
    minExclusive: true,
    max: 2 ** 31 - 1,
    integer: false,
  }),
};

/** The binding of a Durable Object namespace (`env.SVC_DEDUP`), as much of it as the store uses. */
export interface DedupObjectNamespace {
  idFromName(name: string): unknown;
  get(id: never): { fetch(input: string, init?: RequestInit): Promise<Response> };
}

/** Options of `durableObjectStore(namespace, options?)`; docs/options.md lists them with their bounds. */
export interface DurableObjectStoreOptions {
  /** How many objects the ids are spread over (by a hash of the id). Keep it once deliveries flow. Default 16. */
  shards?: number;
  /** Names the objects: stores with one namespace and prefix share their claims. Default `svc-webhooks:`. */
  prefix?: string;
  /** How long handled ids are kept, in ms. Default: one day plus an hour. */
  retentionMs?: number;
  /** Longest wait for one object's answer, in ms; past it the delivery fails closed (503). Default 1000. */
  commandTimeoutMs?: number;
}

/**
 * A de-dup store for Cloudflare Workers on Durable Objects (`SvcDedupObject`), shared by every
 * isolate of every Worker bound to the namespace: one object per shard of the delivery ids, each
 * claim a request to it, with the Redis store's claims, leases and retention.
 */
export class DurableObjectStore implements DeliveryStore {
  readonly retentionMs: number;
  private readonly shards: number;
  private readonly prefix: string;
  private readonly timeoutMs: number;

  constructor(
    private readonly namespace: DedupObjectNamespace,
    options: DurableObjectStoreOptions = {},
  ) {
    const read = readOptions(DURABLE_OBJECT_STORE_OPTIONS, options, { factory: 'durableObjectStore' });
    const given = namespace as Partial<DedupObjectNamespace> | null | undefined;
    if (typeof given?.idFromName !== 'function' || typeof given.get !== 'function')
      throw new TypeError('svc-webhooks: durableObjectStore needs a Durable Object namespace binding (env.SVC_DEDUP), with idFromName and get');
    this.shards = read.shards;
    this.prefix = read.prefix;
    this.retentionMs = read.retentionMs;
    this.timeoutMs = read.commandTimeoutMs;
  }

  async claim(id: string, leaseMs: number): Promise<ClaimResult> {
    const token = crypto.randomUUID();
    let answer: DedupClaimAnswer;
    try {
      answer = (await this.command({ op: 'claim', id, token, ms: Math.ceil(leaseMs) })) as DedupClaimAnswer;
    } catch (err) {
      // The object may still carry out a claim whose answer came too late: release it, so the
      // delivery is not blocked for a whole lease by a claim nobody holds. An object runs its
      // requests in order, so the release is not overtaken by the claim.
      this.release(id, token).catch(() => undefined);
      throw err;
    }
    return answer.state === 'claimed' ? { state: 'claimed', token } : { state: answer.state };
  }

  async commit(id: string, token: string): Promise<void> {
    await this.command({ op: 'commit', id, token, ms: Math.ceil(this.retentionMs) });
  }

  async release(id: string, token: string): Promise<void> {
    await this.command({ op: 'release', id, token });
  }

  async extend(id: string, token: string, leaseMs: number): Promise<void> {
    await this.command({ op: 'extend', id, token, ms: Math.ceil(leaseMs) });
  }

  /** Nothing to close: each command is a request of its own. */
  close(): void {}

  /** The object that keeps `id`: a shard chosen by FNV-1a of the id, the same in every isolate. */
  shardOf(id: string): number {
    let hash = 0x811c9dc5;
    for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
    return (hash >>> 0) % this.shards;
  }

  /** One command; an answer slower than the timeout fails, so the delivery fails closed well inside the sender's 10 s. */
  private async command(command: DedupCommand): Promise<unknown> {
    const stub = this.namespace.get(this.namespace.idFromName(`${this.prefix}${this.shardOf(command.id)}`) as never);
    const init: RequestInit = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(command) };
    return answeredWithin(
      (signal) => stub.fetch('https://svc-dedup/', { ...init, signal }).then((response) => answerOf(response, command.op)),
      this.timeoutMs,
      () => `the de-dup Durable Object did not answer ${command.op} within ${this.timeoutMs} ms`,
    );
  }
}

async function answerOf(response: Response, op: string): Promise<unknown> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    // Not JSON: said below.
  }
  if (!response.ok || typeof body !== 'object' || body === null)
    throw new Error(`the de-dup Durable Object answered ${op} with HTTP ${response.status}${describe(body)}`);
  return body;
}

function describe(body: unknown): string {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  return typeof error === 'string' ? `: ${error.slice(0, 200)}` : '';
}

/**
 * The de-dup store on Durable Objects: `store: durableObjectStore(env.SVC_DEDUP)`, with the Worker
 * exporting `SvcDedupObject` and `wrangler.toml` binding it (docs/frameworks.md).
 */
export function durableObjectStore(namespace: DedupObjectNamespace, options?: DurableObjectStoreOptions): DurableObjectStore {
  return new DurableObjectStore(namespace, options);
}
