import pino from 'pino';
import { SvcWebhookError } from '../../../src/errors';
import { pathPattern } from '../../../src/internal/request/path-pattern';
import type { RequestFacts } from '../../../src/internal/request/request-access';
import { RefusalLog } from '../../../src/observe/refusal-log';
import { boardSignature } from '../../../src/testing/sign-delivery';
import { boardVerifier, type BoardSignature } from '../../../src/verify/verify-signature';
import { secretKeys } from '../../../src/verify/secret-keys';
import type { SecretLookup } from '../../../src/verify/secret-resolver';
import type { SecretSource } from '../../../src/verify/secret-source';
import { refusal } from '../../support/refusal';

const secret = 'board-protocol-secret-0123456789';
const otherSecret = 'another-board-secret-0123456789';
const NOW = 1_772_366_400_000;
const TS = NOW / 1000;
const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
// Board ids as svc writes them: lowercase UUIDs.
const B1 = '6f1c2a9e-3b7d-4e8f-9a0b-1c2d3e4f5a6b';
const B9 = '9e8d7c6b-5a49-4f38-a271-605f4e3d2c1b';
const FIXED = pathPattern('/webhooks/board', ['boardId']);
const PER_BOARD = pathPattern('/webhooks/boards/:boardId', ['boardId']);

function verifierOf(secrets: SecretSource, pattern = FIXED, toleranceSeconds = 300) {
  return boardVerifier({ secrets, pattern, toleranceSeconds });
}

const fixed = () => verifierOf({ keys: secretKeys(secret) });

function lookupOf(answer: (id: string) => ReturnType<SecretLookup['keysFor']>, secrets: readonly string[] = [secret]) {
  const keysFor = jest.fn(answer);
  const secretsOf = jest.fn((_id: string) => secrets);
  return { lookup: { keysFor, secretsOf } as unknown as SecretLookup, keysFor, secretsOf };
}

function event(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: ID, type: 'task.created', createdAt: '2026-03-01T12:00:00.000Z', sequence: 7, board: { id: B1, name: 'B' }, task: { id: 't1' }, ...overrides };
}

function req(headers: Record<string, string> = {}, url = '/webhooks/board'): RequestFacts {
  return { headers, url };
}

function signed(body: Buffer, key = secret, timestamp = TS): BoardSignature {
  return { claimed: Buffer.from(boardSignature(key, timestamp, body.toString()).slice('v1='.length), 'hex'), timestampText: String(timestamp), timestamp };
}

/** The unverified claims the refusal log line shows for `request`. */
function claimsLogged(request: RequestFacts): Record<string, unknown> {
  const lines: string[] = [];
  const log = new RefusalLog(pino({ level: 'info' }, { write: (s: string) => void lines.push(s) }), () => 0);
  log.refused(new SvcWebhookError('signature_mismatch', 'x'), request, {});
  return JSON.parse(lines[0]!).unverified;
}

describe('the board verifier', () => {
  it('reads the signature and the timestamp, within the tolerance it was given', () => {
    const verifier = verifierOf({ keys: secretKeys(secret) }, FIXED, 60);
    const headers = { 'x-svc-signature': boardSignature(secret, TS, '{}'), 'x-svc-timestamp': String(TS) };
    expect(verifier.readSignature(req(headers), NOW + 60_000)).toMatchObject({ timestamp: TS, timestampText: String(TS) });
    expect(refusal(() => verifier.readSignature(req(headers), NOW + 61_000))).toBe('timestamp_out_of_tolerance');
  });

  describe('verifies with one fixed secret', () => {
    const body = Buffer.from(JSON.stringify(event()));

    it('synchronously, when the body carries its MAC: verified by no board in particular, at the signed timestamp', () => {
      expect(fixed().verify(signed(body), body, req())).toEqual({ by: undefined, timestamp: TS });
    });

    it('refuses a forged body, noting the board it claims for the refusal log', () => {
      const request = req();
      expect(refusal(() => fixed().verify(signed(body, otherSecret), body, request))).toBe('signature_mismatch');
      expect(claimsLogged(request)).toEqual({ boardId: B1 });
    });
  });

  describe('verifies with the secrets of the board the delivery claims, through a lookup', () => {
    const body = Buffer.from(JSON.stringify(event()));

    it('synchronously when they are cached, and says which board verified it', () => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      expect(verifierOf({ lookup }).verify(signed(body), body, req())).toEqual({ by: B1, timestamp: TS });
      expect(keysFor).toHaveBeenCalledWith(B1);
    });

    it('refuses a body signed with another secret, noting the claimed board', () => {
      const { lookup } = lookupOf(() => secretKeys(secret));
      const request = req();
      expect(refusal(() => verifierOf({ lookup }).verify(signed(body, otherSecret), body, request))).toBe('signature_mismatch');
      expect(claimsLogged(request)).toEqual({ boardId: B1 });
    });

    it('waits for keys still being asked for; a forged body is refused after them, noting the claimed board', async () => {
      const { lookup } = lookupOf(() => Promise.resolve(secretKeys(secret)));
      const verifier = verifierOf({ lookup });
      await expect(verifier.verify(signed(body), body, req())).resolves.toEqual({ by: B1, timestamp: TS });
      const request = req();
      await expect(verifier.verify(signed(body, otherSecret), body, request)).rejects.toMatchObject({ code: 'signature_mismatch' });
      expect(claimsLogged(request)).toEqual({ boardId: B1 });
    });

    it('takes the board from the path, which must agree with the body', () => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      const verifier = verifierOf({ lookup }, PER_BOARD);
      const bare = Buffer.from(JSON.stringify(event({ board: undefined })));
      expect(verifier.verify(signed(bare), bare, req({}, `/webhooks/boards/${B9}`))).toEqual({ by: B9, timestamp: TS });
      expect(keysFor).toHaveBeenCalledWith(B9);
      expect(refusal(() => verifier.verify(signed(body), body, req({}, `/webhooks/boards/${B9}`)))).toBe('board_id_mismatch');
    });

    it.each([
      'constructor',
      '__proto__',
      'hasOwnProperty',
      'b-1',
      B1.toUpperCase(),
      B1.replace(/-/g, ''),
      `{${B1}}`,
      `${B1} `,
      "' OR '1'='1",
      '../../etc/passwd',
    ])('refuses a body claiming board %p, which is no board id (a lowercase UUID), without asking the lookup -> unknown_board', (claimed) => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      const hostile = Buffer.from(JSON.stringify(event({ board: { id: claimed, name: 'B' } })));
      const request = req();
      expect(refusal(() => verifierOf({ lookup }).verify(signed(hostile), hostile, request))).toBe('unknown_board');
      expect(keysFor).not.toHaveBeenCalled();
      expect(claimsLogged(request)).toEqual({ boardId: claimed });
    });

    it('refuses a path naming no board id, without asking the lookup -> unknown_board', () => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      const bare = Buffer.from(JSON.stringify(event({ board: undefined })));
      for (const named of ['constructor', 'b-9', B9.toUpperCase()]) {
        expect(refusal(() => verifierOf({ lookup }, PER_BOARD).verify(signed(bare), bare, req({}, `/webhooks/boards/${named}`)))).toBe('unknown_board');
      }
      expect(keysFor).not.toHaveBeenCalled();
    });

    it('refuses a body that names no board, noting none', () => {
      const { lookup } = lookupOf(() => secretKeys(secret));
      const bare = Buffer.from(JSON.stringify(event({ board: undefined })));
      const request = req();
      expect(refusal(() => verifierOf({ lookup }).verify(signed(bare), bare, request))).toBe('board_id_missing');
      expect(claimsLogged(request)).toEqual({});
    });
  });

  describe('names the secrets of the board that verified a delivery, dropped from the lines about it (secretsOf)', () => {
    const boardSecret = 'the-secret-of-board-b1-0123456789';

    it('with a lookup: the secrets of the board that verified the delivery', () => {
      const { lookup, secretsOf } = lookupOf(() => secretKeys(boardSecret), [boardSecret]);
      expect(verifierOf({ lookup }).secretsOf(B1)).toEqual([boardSecret]);
      expect(secretsOf).toHaveBeenCalledWith(B1);
    });

    it('with a lookup and no verifying board: none, and asks for none', () => {
      const { lookup, secretsOf } = lookupOf(() => secretKeys(boardSecret), [boardSecret]);
      expect(verifierOf({ lookup }).secretsOf(undefined)).toEqual([]);
      expect(secretsOf).not.toHaveBeenCalled();
    });

    it("with a fixed secret: none (the webhook's own logger drops it)", () => {
      expect(fixed().secretsOf(B1)).toEqual([]);
    });
  });
});
