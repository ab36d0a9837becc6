import { SvcWebhookError } from '../errors';
import type { Verified } from '../internal/delivery';
import { NO_SECRETS } from '../internal/log-redaction';
import { pathId, type PathPattern } from '../internal/path-pattern';
import { isThenable } from '../internal/thenable';
import { isSvcResourceId } from '../internal/uuid';
import type { MacKey } from './mac';
import type { SecretSource } from './secret-source';
import type { Verifier } from './verifier';
import { readBotSignature, settled, verifyBotSignature } from './verify-signature';

const FIXED: Verified = Object.freeze({ by: undefined });

/** The bot webhook's signature: `sha256=` HMAC over the raw body. */
export function botVerifier(secrets: SecretSource, pattern: PathPattern): Verifier<Uint8Array> {
  const { keys, lookup } = secrets;
  return {
    readSignature: (request) => readBotSignature(request),
    verify(claimed, body, request) {
      if (keys !== undefined) return settled(verifyBotSignature(keys, claimed, body), FIXED);
      // A bot update names no bot to trust before it is verified: the path says which bot's secret to use.
      const botId = pathId(pattern, request);
      if (botId === undefined) throw new SvcWebhookError('unknown_bot', 'the request path names no bot');
      // The resolver is asked only about what can be a bot user's id (a lowercase UUID).
      if (!isSvcResourceId(botId)) throw new SvcWebhookError('unknown_bot', 'the bot this path names is no svc user id (a lowercase UUID), so no secret is known for it');
      const verified: Verified = { by: botId };
      const found = lookup.keysFor(botId);
      if (isThenable<readonly MacKey[]>(found)) return Promise.resolve(found).then((k) => settled(verifyBotSignature(k, claimed, body), verified));
      return settled(verifyBotSignature(found, claimed, body), verified);
    },
    secretsOf: (verifiedBy) => (lookup === undefined || verifiedBy === undefined ? NO_SECRETS : lookup.secretsOf(verifiedBy)),
  };
}
