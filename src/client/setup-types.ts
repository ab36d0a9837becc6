/**
 * Shapes of the setup and version routes. Fields the spec names are typed; their types are given
 * where the spec gives them and `unknown` where it does not. svc may add fields at any time, so
 * every shape is open.
 */

/** A timestamp of webhook state; the spec does not show its format. */
export type SvcTimestamp = string | number;

/** GET /api/version. */
export interface VersionInfo {
  /** Release version of the server; `dev` for a local build. */
  version: string;
  /** Short commit id of the build; `unknown` if not stamped. */
  commit: string;
  /** SPDX id of the license. */
  license: string;
  commercialLicense: string;
  attribution: string;
  url: string;
  product: string;
  planContact: string;
  [field: string]: unknown;
}

/** The state both webhooks report; the secret is never part of it. */
export interface WebhookStateBase {
  url: string;
  enabled: boolean;
  disabledAt: SvcTimestamp | null;
  failingSince: SvcTimestamp | null;
  lastOkAt: SvcTimestamp | null;
  lastError: unknown;
  pending: unknown;
  [field: string]: unknown;
}

/** The state of the bot webhook. */
export type BotWebhookState = WebhookStateBase;

/** The state of a board webhook. */
export interface BoardWebhookState extends WebhookStateBase {
  hasSecret: boolean;
  /** `PLAN` when paused because the plan dropped below Business; other values may come. */
  pausedReason: string | null;
  [field: string]: unknown;
}

/** The body of PUT /api/bots/me/webhook: the receiver's URL and its secret. */
export interface BotWebhookInput {
  /** https, public address. */
  url: string;
  /** 16 to 256 characters, not the bot token. */
  secret: string;
}

/** The body of PUT /api/boards/{id}/webhook: the receiver's URL and, to keep one, its secret. */
export interface BoardWebhookInput {
  url: string;
  /** 16 to 256 characters; leave it out to have svc generate one (returned once). */
  secret?: string;
}

/** What PUT /api/boards/{id}/webhook answers: the state, and the secret when svc generated one. */
export interface BoardWebhookSetResult {
  webhook: BoardWebhookState;
  /** Present only when svc generated the secret: it is returned this once and never again. */
  generatedSecret?: string;
}

/** POST /api/boards/{id}/webhook/ping: the outcome of the ping delivery svc made. */
export interface PingResult {
  ok: boolean;
  /** The receiver's HTTP status. */
  status: unknown;
  /** An error text when the delivery failed. */
  error: unknown;
  [field: string]: unknown;
}
