/**
 * `svc-webhooks/testing`: sign deliveries as svc does, build valid example events, and POST them
 * to an app in one call. For tests and local tools, not for production code.
 *
 * @module svc-webhooks/testing
 */
export {
  signBoardEvent,
  signBotUpdate,
  boardSignature,
  botSignature,
  BOARD_USER_AGENT,
  BOT_USER_AGENT,
  type SignedDelivery,
  type SignOptions,
  type BoardSignOptions,
} from './sign-delivery';
export { boardEvent, botUpdate, botCommand, exampleBoardTypes, exampleBotKinds, type BotUpdateOf, type BotEnvelopeOverrides } from './example-events';
export type { DeepPartial } from './merge-overrides';
export { deliverBoardEvent, deliverBotUpdate, postSigned, type DeliverOptions, type DeliverTarget } from './deliver';
export { silentLogger } from './silent-logger';
export {
  createFakeSvc,
  FakeSvcError,
  fakeSvcErrorCodes,
  type FakeSvc,
  type FakeSvcOptions,
  type ApiRequest,
  type ApiTrafficOptions,
  type FakeSvcErrorCode,
  type Audit,
  type AuditAttempt,
  type AuditDelivery,
  type ChaosOptions,
  type EmulatedBoard,
  type EmulatedBot,
  type EmulatedPerson,
  type BoardEmit,
  type EmittedBoardType,
  type BotEmit,
  type ChangeAuthor,
  type Emitted,
  type BoardWebhookView,
  type BotWebhookView,
  type DeliveryStatus,
  type StateTimeFormat,
  type ApiFault,
  type ApiFaultAnswer,
} from './emulator';
