/**
 * The error the setup client throws. As in the receiver's error model, `code` is the contract and
 * the message is for people. Messages never quote a token or a webhook secret.
 */
export const clientErrorCodes = [
  /** `baseUrl` is not an absolute http(s) URL, or carries credentials, a query or a fragment. */
  'invalid_base_url',
  /** The token is missing, malformed, or of a kind these routes do not accept. */
  'invalid_token',
  /** The webhook url is not https or points to a private, loopback or localhost address. */
  'invalid_url',
  /** The webhook secret is not 16 to 256 characters, or is an svc token. */
  'invalid_secret',
  /** The board id is empty. */
  'invalid_board_id',
  /** svc answered 429 (the ping route: called again within 10 seconds); `retryAfter` says when to call again. */
  'rate_limited',
  /** svc answered with another non-2xx status, or with a redirect (not followed); a 503 may carry `retryAfter`. */
  'svc_api_error',
  /** svc answered 2xx, but not with the JSON the route returns, or with a body over 4 MiB (not read further). */
  'invalid_response',
  /** No answer: the connection failed. */
  'network_error',
  /** No answer within the client's timeout. */
  'timeout',
] as const;

/** The stable code of an SvcClientError: the contract, as `code` is for SvcWebhookError. */
export type ClientErrorCode = (typeof clientErrorCodes)[number];

/** What an SvcClientError carries besides its code and message. */
export interface SvcClientErrorOptions {
  /** The HTTP status svc answered with, when it answered. */
  status?: number;
  /** Seconds to wait before calling again, from svc's Retry-After. */
  retryAfter?: number;
  cause?: unknown;
}

/** An error of the setup client: a refused input, or svc's answer, with a stable `code`; never a token. */
export class SvcClientError extends Error {
  override readonly name = 'SvcClientError';
  readonly code: ClientErrorCode;
  /** The HTTP status svc answered with; undefined when the request was refused locally or got no answer. */
  readonly status: number | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ClientErrorCode, message: string, options: SvcClientErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.retryAfter = options.retryAfter;
  }
}

/** Whether `value` is an SvcClientError. */
export function isSvcClientError(value: unknown): value is SvcClientError {
  return value instanceof SvcClientError;
}
