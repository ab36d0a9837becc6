/**
 * Receive svc board and bot webhooks: the webhooks (`svcBoardWebhook`, `svcBotWebhook`), their
 * mounts, the standalone verifiers, the de-dup stores, the error model and the payload types. The
 * setup client is `svc-webhooks/client`, the webhook watcher `svc-webhooks/watch`, the test helpers
 * `svc-webhooks/testing`. The guides are in the repository's docs/ folder.
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
export type { SqlClient, SqlResult } from './internal/connections/sql-client';
export {
  boardSequenceTracker,
  BoardSequenceTracker,
  type SequencedBoardEvent,
  type SequenceGap,
  type SequenceTrackerOptions,
} from './ordering/board-sequence-tracker';

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
