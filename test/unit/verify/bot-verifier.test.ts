import { pathPattern } from '../../../src/internal/request/path-pattern';
import type { RequestFacts } from '../../../src/internal/request/request-access';
import { botSignature } from '../../../src/testing/sign-delivery';
import { botVerifier } from '../../../src/verify/verify-signature';
import { secretKeys } from '../../../src/verify/secret-keys';
import type { SecretLookup } from '../../../src/verify/secret-resolver';
import { refusal } from '../../support/refusal';

const secret = 'bot-protocol-secret-0123456789';
const otherSecret = 'another-bot-secret-0123456789';
const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const FIXED = pathPattern('/webhooks/bot', ['botId']);
// A bot user's id as svc writes it: a lowercase UUID.
const B7 = '7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d';
const PER_BOT = pathPattern('/webhooks/bots/:botId', ['botId']);

const fixed = () => botVerifier({ keys: secretKeys(secret) }, FIXED);

/** A scripted lookup: each bot's keys, synchronously (cached) or as a promise (asked). */
function lookupOf(answer: (id: string) => ReturnType<SecretLookup['keysFor']>, secrets: readonly string[] = [secret]) {
  const keysFor = jest.fn(answer);
  const secretsOf = jest.fn((_id: string) => secrets);
  return { lookup: { keysFor, secretsOf } as unknown as SecretLookup, keysFor, secretsOf };
}

function req(headers: Record<string, string> = {}, url = '/webhooks/bot'): RequestFacts {
  return { headers, url };
}

function claimOf(body: Buffer, key = secret): Buffer {
  return Buffer.from(botSignature(key, body.toString()).slice('sha256='.length), 'hex');
}

describe('the bot verifier', () => {
  describe('reads the signature', () => {
    it('from X-Svc-Signature, as the MAC bytes', () => {
      const body = Buffer.from('{}');
      const signature = fixed().readSignature(req({ 'x-svc-signature': botSignature(secret, '{}') }), NOW);
      expect(Buffer.from(signature).equals(claimOf(body))).toBe(true);
    });

    it('refuses a request without one', () => {
      expect(refusal(() => fixed().readSignature(req(), NOW))).toBe('signature_missing');
    });
  });

  describe('verifies with one fixed secret', () => {
    const body = Buffer.from('{"id":"x"}');

    it('synchronously, when the body carries its MAC: verified by no bot in particular', () => {
      expect(fixed().verify(claimOf(body), body, req())).toEqual({ by: undefined });
    });

    it('refusing a body signed with another secret', () => {
      expect(refusal(() => fixed().verify(claimOf(body, otherSecret), body, req()))).toBe('signature_mismatch');
    });
  });

  describe('verifies with the secret of the bot the path names, through a lookup', () => {
    const body = Buffer.from('{"id":"x"}');

    it('asks the lookup for that bot, answers synchronously when its keys are cached, and says the bot verified it', () => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      const verifier = botVerifier({ lookup }, PER_BOT);
      expect(verifier.verify(claimOf(body), body, req({}, `/webhooks/bots/${B7}`))).toEqual({ by: B7 });
      expect(keysFor).toHaveBeenCalledWith(B7);
      expect(refusal(() => verifier.verify(claimOf(body, otherSecret), body, req({}, `/webhooks/bots/${B7}`)))).toBe('signature_mismatch');
    });

    it('waits for keys the lookup is still asking for, and refuses a forged body after them', async () => {
      const { lookup } = lookupOf(() => Promise.resolve(secretKeys(secret)));
      const verifier = botVerifier({ lookup }, PER_BOT);
      await expect(verifier.verify(claimOf(body), body, req({}, `/webhooks/bots/${B7}`))).resolves.toEqual({ by: B7 });
      await expect(verifier.verify(claimOf(body, otherSecret), body, req({}, `/webhooks/bots/${B7}`))).rejects.toMatchObject({ code: 'signature_mismatch' });
    });

    it('refuses a path that names no bot, without asking the lookup', () => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      expect(refusal(() => botVerifier({ lookup }, PER_BOT).verify(claimOf(body), body, req({}, '/elsewhere')))).toBe('unknown_bot');
      expect(keysFor).not.toHaveBeenCalled();
    });

    it.each([
      'constructor',
      '__proto__',
      'toString',
      'b-7',
      B7.toUpperCase(),
      B7.replace(/-/g, ''),
      `{${B7}}`,
      `${B7}%20`,
      "x'%20OR%20'1'='1",
      '..%2F..%2Fetc',
    ])('refuses a path naming %p, which is no bot user id (a lowercase UUID), without asking the lookup -> unknown_bot', (named) => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      expect(refusal(() => botVerifier({ lookup }, PER_BOT).verify(claimOf(body), body, req({}, `/webhooks/bots/${named}`)))).toBe('unknown_bot');
      expect(keysFor).not.toHaveBeenCalled();
    });
  });

  describe('names the secrets of the bot that verified a delivery, dropped from the lines about it (secretsOf)', () => {
    const botSecret = 'the-secret-of-bot-b7-0123456789';

    it('with a lookup: the secrets of the bot the path named', () => {
      const { lookup, secretsOf } = lookupOf(() => secretKeys(botSecret), [botSecret]);
      expect(botVerifier({ lookup }, PER_BOT).secretsOf(B7)).toEqual([botSecret]);
      expect(secretsOf).toHaveBeenCalledWith(B7);
    });

    it('with a lookup and no verifying bot: none, and asks for none', () => {
      const { lookup, secretsOf } = lookupOf(() => secretKeys(botSecret), [botSecret]);
      expect(botVerifier({ lookup }, PER_BOT).secretsOf(undefined)).toEqual([]);
      expect(secretsOf).not.toHaveBeenCalled();
    });

    it("with a fixed secret: none (the webhook's own logger drops it)", () => {
      expect(fixed().secretsOf(B7)).toEqual([]);
    });
  });
});
