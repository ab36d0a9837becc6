import type { MacKey } from './mac';
import type { WebhookLogger } from '../internal/logging/logger';
import { SvcWebhookError } from '../errors';
import type { SecretLookupSettings } from './secret-lookup-options';
import { safeError } from '../internal/logging/safe-error';
import { isThenable } from '../internal/checks/value-checks';
import { secretKeys } from './secret-keys';

/** What a resolver may answer: the secret, several (a rotation of that one board or bot), or undefined for one it does not know. */
export type SecretAnswer = string | readonly string[] | undefined | null;

/**
 * The board webhook's resolver gets the board the delivery claims (unverified until the MAC
 * matches): always a lowercase UUID, as svc writes board ids; a delivery claiming anything else is
 * refused `unknown_board` without asking.
 */
export interface BoardSecretClaim {
  readonly boardId: string;
}

/**
 * The bot webhook's resolver gets the bot named by the request path (`:botId`): always a lowercase
 * UUID, as svc writes user ids; a path naming anything else is refused `unknown_bot` without asking.
 */
export interface BotSecretClaim {
  readonly botId: string;
}

/** Many boards or bots: the secret(s) of the one a delivery claims, or undefined when it is not connected here. */
export type SecretResolver<C> = (claim: C) => SecretAnswer | PromiseLike<SecretAnswer>;

export type { SecretLookupOptions } from './secret-lookup-options';

interface Entry {
  /** Undefined: the resolver does not know this id. */
  readonly keys: readonly MacKey[] | undefined;
  /** The secrets themselves, so the handlers' loggers can drop them. */
  readonly secrets: readonly string[];
  readonly expires: number;
}

const MAX_UNKNOWN = 1_000;
/** A resolver's failures for one id are logged at most once per this interval; the next line counts the others. */
export const FAILURE_LOG_INTERVAL_MS = 60_000;
/**
 * And at most this many failure lines per interval over all ids: every unsigned request may claim a
 * fresh board id, and each would otherwise be a line of its own.
 */
export const MAX_FAILURE_LINES = 10;

/** What a SecretLookup is made of. */
export interface SecretLookupParts {
  /** The user's resolver, asked for one board (bot) id. */
  readonly resolve: (id: string) => SecretAnswer | PromiseLike<SecretAnswer>;
  readonly webhook: 'board' | 'bot';
  /** The `secretLookup` option, read (`secretLookupSettings`). */
  readonly options: SecretLookupSettings;
  readonly logger: WebhookLogger;
  /** Clock in ms since the epoch; default `Date.now`. */
  readonly now?: () => number;
}

/**
 * The secrets of many boards (or bots), each looked up by its id through the user's resolver, cached,
 * and looked up once at a time per id: concurrent deliveries for one id share the lookup.
 */
export class SecretLookup {
  private readonly known = new Map<string, Entry>();
  private readonly unknown = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();
  /** When each id's last lookup failed to end; bounded as the unknown ids are. */
  private readonly failedUntil = new Map<string, number>();
  /** When each id's failure was last logged, and how many failed lookups since went unlogged. */
  private readonly failureLines = new Map<string, { at: number; repeated: number }>();
  /** The overall limit of failure lines: when its interval began, its lines, the failures not logged since the last line. */
  private readonly lines = { opened: Number.NEGATIVE_INFINITY, written: 0, dropped: 0 };
  /** Bumped by forget(): an answer that was on its way before is not cached. */
  private epoch = 0;
  private readonly ttl: number;
  private readonly unknownTtl: number;
  private readonly max: number;
  private readonly timeout: number;
  private readonly failureTtl: number;
  private readonly maxLookups: number;

  private readonly resolve: (id: string) => SecretAnswer | PromiseLike<SecretAnswer>;
  private readonly what: 'board' | 'bot';
  private readonly logger: WebhookLogger;
  private readonly now: () => number;

  constructor(parts: SecretLookupParts) {
    const { options } = parts;
    this.resolve = parts.resolve;
    this.what = parts.webhook;
    this.logger = parts.logger;
    this.now = parts.now ?? Date.now;
    this.ttl = options.ttlMs;
    this.unknownTtl = options.unknownTtlMs;
    this.max = options.maxIds;
    this.timeout = options.timeoutMs;
    this.failureTtl = options.failureTtlMs;
    this.maxLookups = options.maxLookups;
  }

  /**
   * The HMAC keys of `id`: at once when cached, else a promise. Throws (or rejects) `unknown_board`
   * / `unknown_bot` when the resolver does not know it, `secret_unavailable` when it failed.
   */
  keysFor(id: string): readonly MacKey[] | Promise<readonly MacKey[]> {
    const cached = this.cached(id);
    if (cached !== undefined) return keysOf(cached, this.what);
    if (this.recentlyFailed(id)) throw this.unavailable();
    let lookup = this.pending.get(id);
    if (lookup === undefined) {
      // Lookups of any ids at once are bounded: claimed ids are the sender's (or a forger's) choice.
      // Stryker disable next-line StringLiteral: message text only (test/mutation/EQUIVALENT.core.md)
      if (this.pending.size >= this.maxLookups) throw this.unavailable('too many secret lookups are in flight (secretLookup.maxLookups)');
      lookup = this.lookup(id);
      this.pending.set(id, lookup);
    }
    return lookup.then((entry) => keysOf(entry, this.what));
  }

  /** The secrets of `id` as last looked up, while they are cached. */
  secretsOf(id: string): readonly string[] {
    return this.known.get(id)?.secrets ?? [];
  }

  /** Drops what is known of `id` (after a rotation or a disconnect): the next delivery looks it up again. */
  forget(id: string): void {
    // Stryker disable next-line UpdateOperator: the epoch is only compared for equality with an earlier one (test/mutation/EQUIVALENT.core.md)
    this.epoch++;
    this.known.delete(id);
    this.unknown.delete(id);
    this.pending.delete(id);
    this.failedUntil.delete(id);
  }

  private withoutSecrets(err: Error): Record<string, unknown> {
    // A safeError copy: its message and stack are strings.
    return { type: err.name, message: this.scrub(err.message), stack: this.scrub(err.stack!) };
  }

  private scrub(text: string): string {
    let out = text;
    // Stryker disable next-line ConditionalExpression: splitting at an absent secret changes nothing (test/mutation/EQUIVALENT.core.md)
    for (const entry of this.known.values()) for (const secret of entry.secrets) if (out.includes(secret)) out = out.split(secret).join('[Redacted]');
    return out;
  }

  private cached(id: string): Entry | undefined {
    const entry = this.known.get(id) ?? this.unknown.get(id);
    if (entry === undefined) return undefined;
    if (entry.expires > this.now()) return entry;
    this.known.delete(id);
    this.unknown.delete(id);
    return undefined;
  }

  private lookup(id: string): Promise<Entry> {
    const epoch = this.epoch;
    let timer: NodeJS.Timeout | undefined;
    const answer = new Promise<SecretAnswer>((resolve, reject) => {
      timer = setTimeout(() => reject(new LookupTimeout()), this.timeout);
      timer.unref?.();
      try {
        const value = this.resolve(id);
        if (isThenable<SecretAnswer>(value)) value.then(resolve, reject);
        else resolve(value);
      } catch (err) {
        reject(err);
      }
    });
    const done = answer
      .then((value) => {
        const entry = this.entry(id, value);
        if (this.epoch === epoch) this.store(id, entry);
        return entry;
      })
      .catch((err: unknown) => {
        throw this.failed(id, err, epoch);
      });
    // Settled or timed out, the next delivery may look up afresh (a hung resolver is not waited on forever).
    void done.then(
      () => this.settle(id, done, timer),
      () => this.settle(id, done, timer),
    );
    return done;
  }

  private settle(id: string, lookup: Promise<Entry>, timer: NodeJS.Timeout | undefined): void {
    clearTimeout(timer);
    if (this.pending.get(id) === lookup) this.pending.delete(id);
  }

  private entry(id: string, value: SecretAnswer): Entry {
    const absent = value === undefined || value === null || (Array.isArray(value) && value.length === 0);
    if (absent) return { keys: undefined, secrets: [], expires: this.now() + this.unknownTtl };
    let keys: MacKey[];
    try {
      keys = secretKeys(value);
    } catch (err) {
      // The messages of secretKeys name a length, never the secret.
      throw new InvalidAnswer((err as Error).message);
    }
    return { keys, secrets: typeof value === 'string' ? [value] : [...(value as readonly string[])], expires: this.now() + this.ttl };
  }

  private recentlyFailed(id: string): boolean {
    // An expired entry stays until the bound pushes it out: it answers false all the same.
    return (this.failedUntil.get(id) ?? 0) > this.now();
  }

  private store(id: string, entry: Entry): void {
    const [map, max] = entry.keys === undefined ? [this.unknown, MAX_UNKNOWN] : [this.known, this.max];
    this.known.delete(id);
    this.unknown.delete(id);
    map.set(id, entry);
    if (map.size > max) map.delete(map.keys().next().value!);
  }

  private failed(id: string, err: unknown, epoch: number): SvcWebhookError {
    const at = this.now();
    // A failure of a lookup that set out before forget() is not remembered, as its answer would not be.
    if (this.epoch === epoch) bounded(this.failedUntil, id, at + this.failureTtl);
    // One line per id per interval: a resolver that is down must not write a line per delivery.
    const last = this.failureLines.get(id);
    if (last !== undefined && at - last.at < FAILURE_LOG_INTERVAL_MS) {
      last.repeated++;
      return this.unavailable();
    }
    if (!this.mayWriteLine(at)) {
      if (last !== undefined) last.repeated++;
      return this.unavailable();
    }
    bounded(this.failureLines, id, { at, repeated: 0 });
    const timedOut = err instanceof LookupTimeout;
    const invalid = err instanceof InvalidAnswer;
    const fields: Record<string, unknown> = { [`${this.what}Id`]: id, code: 'secret_unavailable' };
    // The failed lookups of this id since the last line, which had none of their own.
    if (last !== undefined && last.repeated > 0) fields.repeated = last.repeated;
    // The failures of other ids that the overall limit kept from a line.
    if (this.lines.dropped > 0) fields.dropped = this.lines.dropped;
    this.lines.dropped = 0;
    if (!timedOut && !invalid) fields.err = this.withoutSecrets(safeError(err));
    this.logger.error(
      fields,
      timedOut
        ? `the secret resolver did not answer within ${this.timeout} ms; the delivery is answered 503 and svc retries it`
        : invalid
          ? `the secret resolver answered with something that is not a webhook secret: ${(err as Error).message}; the delivery is answered 503 and svc retries it`
          : 'the secret resolver threw or rejected; the delivery is answered 503 and svc retries it',
    );
    return this.unavailable();
  }

  /** Whether the overall limit leaves room for a failure line now; counts the failure when not. */
  private mayWriteLine(at: number): boolean {
    const lines = this.lines;
    if (at - lines.opened >= FAILURE_LOG_INTERVAL_MS) {
      lines.opened = at;
      lines.written = 0;
    }
    if (lines.written >= MAX_FAILURE_LINES) {
      lines.dropped++;
      return false;
    }
    lines.written++;
    return true;
  }

  // Stryker disable next-line StringLiteral: message text only (test/mutation/EQUIVALENT.core.md)
  private unavailable(why = `the webhook secret of this ${this.what} could not be looked up`): SvcWebhookError {
    return new SvcWebhookError('secret_unavailable', `${why}; retry later`, { retryAfter: 5 });
  }
}

/** Sets `key` last in `map`, dropping the oldest entry beyond the bound of unknown ids. */
function bounded<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_UNKNOWN) map.delete(map.keys().next().value!);
}

function keysOf(entry: Entry, what: 'board' | 'bot'): readonly MacKey[] {
  if (entry.keys !== undefined) return entry.keys;
  throw what === 'board'
    ? new SvcWebhookError('unknown_board', 'no webhook secret is known for the board this delivery claims')
    : new SvcWebhookError('unknown_bot', 'no webhook secret is known for the bot of this path');
}

class LookupTimeout extends Error {}
class InvalidAnswer extends Error {}
