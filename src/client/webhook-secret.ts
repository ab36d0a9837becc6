import { SvcClientError } from './svc-client-error';
import { tokenKind } from './token-kinds';

/** The spec's limits for both webhook PUT routes. */
export const WEBHOOK_SECRET_MIN_LENGTH = 16;
/** The longest webhook secret svc takes. */
export const WEBHOOK_SECRET_MAX_LENGTH = 256;

/**
 * Why svc would refuse `secret`, or undefined when it would not. The length is counted as the
 * receiver counts it (UTF-16 units), so a secret accepted here is accepted by `svcBoardWebhook`.
 */
export function webhookSecretProblem(secret: string): string | undefined {
  if (secret.length < WEBHOOK_SECRET_MIN_LENGTH || secret.length > WEBHOOK_SECRET_MAX_LENGTH) {
    return `it must be ${WEBHOOK_SECRET_MIN_LENGTH} to ${WEBHOOK_SECRET_MAX_LENGTH} characters long (it has ${secret.length})`;
  }
  // The spec asks to keep the webhook secret apart from the bot token; reusing a token leaks it to the receiver.
  if (tokenKind(secret) !== 'other') return 'it is an svc token; use a separate random secret for the webhook';
  return undefined;
}

/** Throws `invalid_secret` unless svc would accept `secret` for a webhook. */
export function checkWebhookSecret(secret: unknown): string {
  if (typeof secret !== 'string') throw new SvcClientError('invalid_secret', 'the webhook secret must be a string');
  const problem = webhookSecretProblem(secret);
  if (problem !== undefined) throw new SvcClientError('invalid_secret', `the webhook secret is refused: ${problem}`);
  return secret;
}
