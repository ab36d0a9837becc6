import { DAY_MS } from '../internal/delivery/svc-limits';
import { numberOption, readOptions, type ReadOptions } from '../internal/checks/option-table';

/** `secretLookup`: how a secret resolver's answers are cached and how long a lookup may take. */
export interface SecretLookupOptions {
  /** How long a known board's (or bot's) secrets are cached, in ms. Default 60000. */
  ttlMs?: number;
  /** How long "unknown" is cached, in ms: short, so that a board connected just after its first delivery works on the sender's retry (1 min later). Default 10000. */
  unknownTtlMs?: number;
  /** How many known boards (or bots) are cached; the oldest answer is dropped first. Default 10000. Unknown ones are kept apart, at most 1000. */
  maxIds?: number;
  /** How long a lookup may take, in ms, before the delivery is answered 503 `secret_unavailable`. Default 5000 (the sender waits 10 s). */
  timeoutMs?: number;
  /** How long a failed lookup is remembered, in ms: deliveries for that board (or bot) meanwhile are answered 503 at once, without asking again. Default 5000. */
  failureTtlMs?: number;
  /** How many lookups may be in flight at once, over all boards (or bots); a delivery needing one more is answered 503 at once. Default 64. */
  maxLookups?: number;
}

/** The declaration of every `secretLookup` option (docs/options.md is made from it). */
export const SECRET_LOOKUP_OPTIONS = {
  ttlMs: numberOption({ doc: "How long a known board's (or bot's) secrets are cached.", unit: 'ms', default: 60_000, min: 0, max: DAY_MS, integer: false }),
  unknownTtlMs: numberOption({
    doc: 'How long "unknown" is cached: short, so that a board connected just after its first delivery works on the retry a minute later.',
    unit: 'ms',
    default: 10_000,
    min: 0,
    max: 60_000,
    integer: false,
  }),
  maxIds: numberOption({
    doc: 'How many known boards (or bots) are cached; the oldest answer is dropped first. Unknown ones are kept apart, at most 1,000.',
    unit: 'count',
    default: 10_000,
    min: 1,
    max: 10_000_000,
    integer: false,
  }),
  timeoutMs: numberOption({
    doc: 'How long one lookup may take before the delivery is answered 503 `secret_unavailable` (svc waits 10 s).',
    unit: 'ms',
    default: 5_000,
    min: 1,
    max: 9_000,
    integer: false,
  }),
  failureTtlMs: numberOption({
    doc: 'How long a failed lookup (thrown, timed out, not a secret) is remembered: deliveries for that board or bot meanwhile are answered 503 `secret_unavailable` at once, without asking the resolver again.',
    unit: 'ms',
    default: 5_000,
    min: 0,
    max: 60_000,
    integer: false,
  }),
  maxLookups: numberOption({
    doc: 'How many lookups may be in flight at once, over all boards or bots: a delivery that needs one more is answered 503 `secret_unavailable` at once (svc retries it), so requests claiming made-up ids cannot pile up calls to the resolver.',
    unit: 'count',
    default: 64,
    min: 1,
    max: 100_000,
  }),
};

export type SecretLookupSettings = ReadOptions<typeof SECRET_LOOKUP_OPTIONS>;

/** Reads the `secretLookup` option (absent: every default). */
// Stryker disable next-line StringLiteral: message text only (test/mutation/EQUIVALENT.core.md)
export function secretLookupSettings(input: unknown, factory = 'svcBoardWebhook'): SecretLookupSettings {
  return readOptions(SECRET_LOOKUP_OPTIONS, input ?? {}, {
    factory,
    prefix: 'secretLookup.',
    renamed: { ttl: 'ttlMs', unknownTtl: 'unknownTtlMs', max: 'maxIds', timeout: 'timeoutMs' },
  });
}

// The interface and the table name the same options.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
true satisfies Same<keyof SecretLookupOptions, keyof typeof SECRET_LOOKUP_OPTIONS>;
