/**
 * Receive svc board and bot webhooks: the webhooks (`svcBoardWebhook`, `svcBotWebhook`), their
 * mounts, the standalone verifiers, the de-dup stores, the error model, the payload types, and the
 * setup client. The guides are in the repository's docs/ folder.
 *
 * @module svc-webhooks
 */
// What runs on every runtime: the Fetch entry's exports, then what needs Node.
export * from './web';
export type { Middleware } from './adapters/node/express-middleware';
export { createNodeHandler } from './adapters/node/node-handler';
export {
  fastifyWebhook,
  type FastifyWebhookOptions,
  type FastifyWebhookPlugin,
  type FastifyInstanceLike,
  type FastifyReplyLike,
} from './adapters/node/fastify-plugin';
export type { QueueOutcome, Origin, IgnoreReason, IgnoreOptions } from './route/handler-types';
export type { InboxOptions, InboxCluster, InboxConnection } from './inbox/inbox-options';
export type { WorkOptions, InboxWorker } from './receive/inbox-worker';
export type { SqlClient, SqlResult } from './internal/sql-client';
export {
  boardSequenceTracker,
  BoardSequenceTracker,
  type SequencedBoardEvent,
  type SequenceGap,
  type SequenceTrackerOptions,
} from './ordering/board-sequence-tracker';
export { SvcClientError, isSvcClientError, clientErrorCodes, type ClientErrorCode, type SvcClientErrorOptions } from './client/svc-client-error';
export type {
  VersionInfo,
  BotWebhookState,
  BoardWebhookState,
  BotWebhookInput,
  BoardWebhookInput,
  BoardWebhookSetResult,
  PingResult,
  SvcTimestamp,
} from './client/setup-types';
export { isBotToken, parseBotToken, botTokenProblem, type BotTokenInfo } from './client/bot-token';
export { tokenKind, tokenPrefixes, type TokenKind } from './client/token-kinds';
export { redactSecrets, redactingStream, type LineWriter } from './internal/redact-secrets';
export { checkWebhookSecret, webhookSecretProblem, WEBHOOK_SECRET_MIN_LENGTH, WEBHOOK_SECRET_MAX_LENGTH } from './client/webhook-secret';
/** The watcher's options, and the shapes of what it reports. */
export type { WatchOptions, WatchBotOptions, WatchClient, BoardList, ProbeTarget } from './watch/watch-options';
export type { ExpectUrl } from './watch/expect-url';
export type { WebhookHealth, WebhookStatus, WebhookChange, WebhookWatcher, WatchedWebhook, SvcTime } from './watch/watch-types';
/** Every health a webhook can be reported in, in the order the CLI sorts them. */
export { webhookHealths } from './watch/watch-types';

// The optional parts. Each module below is a bundle of its own in the published package, required
// the first time one of its exports is used (LAZY_FILES in scripts/build.mjs): the default setup
// never loads them. Export their functions and classes from here by name; a constant would have to
// be read, and so loaded, by the ESM entry.
export { redisStore, RedisStore, type RedisStoreOptions, type RedisCommander } from './dedup/redis-store';
export {
  postgresStore,
  PostgresStore,
  type PostgresStoreOptions,
  type PostgresPool,
  type PooledSqlClient,
  type DoneMarkStatement,
} from './dedup/postgres-store';
export { postgresMigrationSql } from './dedup/postgres-sql';
export { deliveryDoneSql } from './webhooks/delivery-done-sql';
export { SvcClient, type SvcClientOptions } from './client/svc-client';
export { checkWebhookUrl, webhookUrlProblem } from './client/webhook-url';
/** The webhook watcher: reports each webhook svc fails, disables or pauses (docs/never-silently-disabled.md). */
export { watchWebhooks } from './watch/watch-webhooks';
