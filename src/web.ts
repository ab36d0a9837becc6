/**
 * The entry point for Fetch runtimes without Node's modules (Cloudflare Workers without
 * `nodejs_compat`, Vercel's Edge runtime and Next.js edge routes, service workers). Bundlers pick it
 * by the package's export conditions (`workerd`, `edge-light`, `worker`, `browser`); Node, Bun and
 * Deno get the full entry. It holds what runs there: the webhooks, the Fetch handler, the
 * standalone verifiers, the memory store and the Redis REST store, and the AWS Lambda handler,
 * which needs no Node module either. The Node adapters, the Redis (TCP) and PostgreSQL stores, the
 * inbox and the setup client need Node and are left out.
 */
export { svcBoardWebhook, type BoardWebhookMiddleware } from './webhooks/svc-board-webhook';
export { svcBotWebhook, type BotWebhookMiddleware, type BotEventKind } from './webhooks/svc-bot-webhook';
export type { WebhookMiddlewareBase } from './webhooks/webhook-methods';
export { createWebHandler, type WebHandler } from './adapters/web/web-handler';
export type { WebhookRequest, WebhookResponse } from './adapters/plain/plain-request';
export { createLambdaHandler } from './adapters/lambda/lambda-handler';
export type {
  LambdaHandler,
  LambdaHttpEvent,
  LambdaHttpResult,
  ApiGatewayProxyEvent,
  ApiGatewayProxyResult,
  ApiGatewayProxyEventV2,
  ApiGatewayProxyResultV2,
  LambdaFunctionUrlEvent,
  AlbEvent,
  AlbResult,
  LambdaHeaders,
  LambdaMultiValueHeaders,
} from './adapters/lambda/lambda-events';
export {
  verifyBoardDelivery,
  verifyBotDelivery,
  type VerifyDeliveryInput,
  type VerifyBoardDeliveryInput,
  type VerifiedBoardDelivery,
  type VerifiedBotDelivery,
} from './webhooks/verify-delivery';
export type { HeaderSource } from './internal/request/headers';
export type { WebhookLogger, LogFn, LoggerLike } from './internal/logging/logger';
export type { LoggerOption } from './internal/logging/webhook-loggers';
export { DEFAULT_PATHS, type WebhookOptions, type BoardWebhookOptions, type BotWebhookOptions } from './webhooks/webhook-options';
export type { SecretResolver, SecretAnswer, BoardSecretClaim, BotSecretClaim, SecretLookupOptions } from './verify/secret-resolver';
export { SvcWebhookError, isSvcWebhookError, errorStatus, type ErrorCode, type SvcWebhookErrorOptions } from './errors';
export type {
  Awaitable,
  DeliveryContext,
  BoardContext,
  BotContext,
  BoardHandler,
  BotHandler,
  CommandData,
  ErrorContext,
  ErrorHandler,
  DeliveryListener,
  DeliveryRecord,
} from './route/handler-types';
export type { SchemaPolicy } from './validate/delivery-checks';
export type { DeliveryStore, ClaimResult } from './dedup/delivery-store';
export type { Failure, ParkedDelivery, ParkingLot, ParkReason } from './dedup/parking-lot';
export type { ParkedDeliveries, ReplayResult } from './webhooks/parked-deliveries';
export { memoryStore, MemoryStore, type MemoryStoreOptions, type MemoryStoreStats } from './dedup/memory-store';
export { redisRestStore, RedisRestStore, type RedisRestStoreOptions } from './dedup/redis-rest-store';
export { durableObjectStore, DurableObjectStore, type DurableObjectStoreOptions, type DedupObjectNamespace } from './dedup/durable-object-store';
export { SvcDedupObject, type DedupObjectState, type DedupObjectStorage } from './dedup/durable-object-claims';
export { BOT_UPDATE_MAX_AGE_MS } from './validate/bot-delivery';
export { boardEventTypes } from './generated/board-types';
export type {
  BoardEventMap,
  BoardEventType,
  BoardWebhookEvent,
  BoardUnknownEvent,
  BoardEventEnvelope,
  BoardTaskEvent,
  BoardTaskCommentEvent,
  BoardTaskMovedOutEvent,
  BoardPingEvent,
  Board,
  Actor,
  Rule,
  Change,
  StatusChangeData,
  MovedBoardChange,
  Attachment,
  Comment,
  Task,
  MovedOutTask,
} from './generated/board-types';
export { botEventKinds } from './generated/bot-types';
export type { BotEventMap, BotEventData, BotWebhookUpdate, DispatchEvent, MessageCreateData, Message, Command } from './generated/bot-types';
export { boardWebhookEventSchema, botWebhookUpdateSchema } from './generated/schemas';
