/**
 * `svc-webhooks/client`: set up what svc delivers to, from code: the setup client (`SvcClient`) for
 * svc's webhook endpoints, and the checks and redaction of what it takes (bot tokens, webhook
 * secrets and URLs). The receiving side, which needs none of it, is the main entry.
 *
 * @module svc-webhooks/client
 */
export { SvcClient, type SvcClientOptions } from './svc-client';
export { SvcClientError, isSvcClientError, clientErrorCodes, type ClientErrorCode, type SvcClientErrorOptions } from './svc-client-error';
export type {
  VersionInfo,
  BotWebhookState,
  BoardWebhookState,
  BotWebhookInput,
  BoardWebhookInput,
  BoardWebhookSetResult,
  PingResult,
  SvcTimestamp,
} from './setup-types';
export { isBotToken, parseBotToken, botTokenProblem, type BotTokenInfo } from './bot-token';
export { tokenKind, tokenPrefixes, type TokenKind } from './token-kinds';
export { redactSecrets, redactingStream, type LineWriter } from '../internal/logging/redact-secrets';
export { checkWebhookSecret, webhookSecretProblem, WEBHOOK_SECRET_MIN_LENGTH, WEBHOOK_SECRET_MAX_LENGTH } from './webhook-secret';
export { checkWebhookUrl, webhookUrlProblem } from './webhook-url';
