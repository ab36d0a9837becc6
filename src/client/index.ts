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
export { redactSecrets, redactingStream, type LineWriter } from '../internal/redact-secrets';
export { checkWebhookUrl, webhookUrlProblem } from './webhook-url';
export { checkWebhookSecret, webhookSecretProblem, WEBHOOK_SECRET_MIN_LENGTH, WEBHOOK_SECRET_MAX_LENGTH } from './webhook-secret';
