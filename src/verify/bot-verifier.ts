import type { KeyObject } from 'node:crypto';
import { SvcWebhookError } from '../errors';
import type { Verified } from '../internal/delivery';
import { NO_SECRETS } from '../internal/log-redaction';
import { pathId, type PathPattern } from '../internal/path-pattern';
import { isThenable } from '../internal/thenable';
import type { SecretSource } from './secret-source';
import type { Verifier } from './verifier';
import { readBotSignature, verifyBotSignature } from './verify-signature';

const FIXED: Verified = Object.freeze({ by: undefined });

/** The bot webhook's signature: `sha256=` HMAC over the raw body. */
export function botVerifier(secrets: SecretSource, pattern: PathPattern): Verifier<Buffer> {
  const { keys, lookup } = secrets;
  return {
    readSignature: (request) => readBotSignature(request),
    verify(claimed, body, request) {
      if (keys !== undefined) {
        verifyBotSignature(keys, claimed, body);
        return FIXED;
      }
      // A bot update names no bot to trust before it is verified: the path says which bot's secret to use.
      const botId = pathId(pattern, request);
      if (botId === undefined) throw new SvcWebhookError('unknown_bot', 'the request path names no bot');
      const verified: Verified = { by: botId };
      const found = lookup.keysFor(botId);
      if (isThenable<readonly KeyObject[]>(found)) {
        return Promise.resolve(found).then((k) => {
          verifyBotSignature(k, claimed, body);
          return verified;
        });
      }
      verifyBotSignature(found, claimed, body);
      return verified;
    },
    secretsOf: (verifiedBy) => (lookup === undefined || verifiedBy === undefined ? NO_SECRETS : lookup.secretsOf(verifiedBy)),
  };
}
