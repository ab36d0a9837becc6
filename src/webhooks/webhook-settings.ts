import type { DeliveryStore } from '../dedup/delivery-store';
import { memoryStore } from '../dedup/memory-store';
import { nodeBuiltin } from '../internal/runtime/node-builtins';
import { pathPattern, type PathPattern } from '../internal/request/path-pattern';
import { readOptions } from '../internal/checks/option-table';
import { inWorkers, webhookLoggers } from '../internal/logging/webhook-loggers';
import type { WebhookLogger } from '../internal/logging/logger';
import type { Settings } from '../receive/settings';
import { secretKeys } from '../verify/secret-keys';
import type { SecretLookupSettings } from '../verify/secret-lookup-options';
import { SecretLookup, type SecretResolver } from '../verify/secret-resolver';
import type { SecretSource } from '../verify/secret-source';
import { ignoreRule, type IgnoreSettings } from '../route/origin';
import { BOARD_WEBHOOK_OPTIONS, BOT_WEBHOOK_OPTIONS, RENAMED_OPTIONS, checkDeadlines, checkIgnore } from './webhook-options';

export type { Settings } from '../receive/settings';
export type { WebhookOptions, BoardWebhookOptions, BotWebhookOptions } from './webhook-options';
export { DEFAULT_PATHS, SPEC_BODY_BYTES } from './webhook-options';

const PATH_PARAMS = { board: ['boardId'], bot: ['botId'] } as const;
const FACTORY = { board: 'svcBoardWebhook', bot: 'svcBotWebhook' } as const;

/**
 * Checks and normalises a webhook's options once, at setup, through its option table; a bad option
 * throws here (naming the option, what it got and the fix), never per request.
 */
export function settings(input: unknown, webhook: 'board' | 'bot'): Settings {
  const options =
    typeof input === 'string' || Array.isArray(input) || typeof input === 'function' || input === undefined || input === '' ? { secret: input } : input;
  const table = webhook === 'board' ? BOARD_WEBHOOK_OPTIONS : BOT_WEBHOOK_OPTIONS;
  const read = readOptions(table, options, { factory: FACTORY[webhook], renamed: RENAMED_OPTIONS });
  checkDeadlines(read);
  const ignore = 'ignore' in read ? ignoreRule(read.ignore as IgnoreSettings | undefined) : undefined;
  checkIgnore({ ignore, inbox: read.inbox });
  const fixedSecrets =
    typeof read.secret === 'string'
      ? [read.secret]
      : Array.isArray(read.secret)
        ? (read.secret as unknown[]).filter((s): s is string => typeof s === 'string')
        : [];
  const loggers = webhookLoggers(read.logger, webhook, fixedSecrets);
  const pattern = pathPattern(read.path, PATH_PARAMS[webhook]);
  const now = read.now ?? Date.now;
  const store = read.store ?? defaultStore(loggers.logger);
  if (read.schemaPolicy === 'park' && store.parking === undefined)
    throw new TypeError(
      "svc-webhooks: `schemaPolicy: 'park'` needs a store with a parking lot (memoryStore, redisStore or postgresStore); this `store` has none",
    );
  return {
    secrets: secretSource({ secret: read.secret, lookupOptions: read.secretLookup, webhook, pattern, logger: loggers.logger, now }),
    fixedSecrets,
    path: pattern.path,
    pattern,
    now,
    maxBodyBytes: read.maxBodyBytes,
    timeoutMs: read.timeoutMs,
    leaseMs: read.leaseMs,
    abandonAfterMs: read.abandonAfterMs,
    store,
    logger: loggers.logger,
    lineLogger: loggers.lineLogger,
    flushLog: loggers.flush,
    schemaPolicy: read.schemaPolicy,
    parkAfterMs: read.parkAfterMs,
    toleranceSeconds: 'toleranceSeconds' in read ? (read.toleranceSeconds as number) : 300,
    ...(read.inbox === undefined ? {} : { inbox: read.inbox }),
    ...(ignore === undefined ? {} : { ignore }),
  };
}

/**
 * The memory store, when the user named none. Where each isolate has its own memory, a retry that
 * lands on another isolate runs the handlers again: said once, at setup, since nothing per request
 * could tell. Naming a store, `memoryStore()` included, says the user knows.
 */
function defaultStore(logger: WebhookLogger): DeliveryStore {
  if (perIsolateMemory()) {
    logger.warn(
      { store: 'memory', dedup: 'per_isolate', option: 'store' },
      'de-duplication is per isolate here: the default store (memory) is this isolate\'s own, so a retry of svc that another isolate receives runs the handlers again. Pass a store that every isolate reaches as `store` (such as `redisRestStore()`), or `store: memoryStore()` to keep this one and silence this line (docs/frameworks.md, "Which store gives handled once")',
    );
  }
  return memoryStore({ logger });
}

/**
 * Workers (with or without `nodejs_compat`), and any runtime with neither Node's modules nor a Node
 * process (Vercel's Edge runtime): what the Fetch build runs on. Node before 20.16 has no
 * `getBuiltinModule` either, so a Node process is asked for by its version.
 */
function perIsolateMemory(): boolean {
  if (inWorkers()) return true;
  const node = (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node;
  return nodeBuiltin('node:crypto') === undefined && typeof node !== 'string';
}

interface SecretSourceInput {
  readonly secret: unknown;
  readonly lookupOptions: SecretLookupSettings | undefined;
  readonly webhook: 'board' | 'bot';
  readonly pattern: PathPattern;
  readonly logger: WebhookLogger;
  readonly now: () => number;
}

function secretSource({ secret, lookupOptions, webhook, pattern, logger, now }: SecretSourceInput): SecretSource {
  if (typeof secret !== 'function') {
    if (pattern.param !== undefined)
      throw new TypeError(`svc-webhooks: a \`path\` with :${pattern.param} needs \`secret\` to be a resolver, which gets that id`);
    if (lookupOptions !== undefined) throw new TypeError('svc-webhooks: `secretLookup` applies only when `secret` is a resolver function');
    return { keys: secretKeys(secret) };
  }
  // A bot update names no bot the receiver could trust before verifying it, so each bot has its own path.
  if (webhook === 'bot' && pattern.param === undefined) {
    throw new TypeError('svc-webhooks: a bot secret resolver needs one path per bot, e.g. `path: "/webhooks/bots/:botId"`');
  }
  const resolver = secret as (claim: object) => ReturnType<SecretResolver<object>>;
  const resolve = webhook === 'board' ? (id: string) => resolver({ boardId: id }) : (id: string) => resolver({ botId: id });
  const options = lookupOptions ?? secretLookupDefaults(webhook);
  return { lookup: new SecretLookup({ resolve, webhook, options, logger, now }) };
}

function secretLookupDefaults(webhook: 'board' | 'bot'): SecretLookupSettings {
  return (webhook === 'board' ? BOARD_WEBHOOK_OPTIONS : BOT_WEBHOOK_OPTIONS).secretLookup.read({}, 'secretLookup') as SecretLookupSettings;
}
