import pino from 'pino';
import { SvcWebhookError, type ErrorCode } from '../../src/errors';
import { pathPattern } from '../../src/internal/path-pattern';
import { boardProtocol, sequenceNumber, type BoardDelivery, type BoardHandlers } from '../../src/receive/board-protocol';
import { RefusalLog } from '../../src/observe/refusal-log';
import type { RequestFacts } from '../../src/internal/request-access';
import type { DeliveryScope } from '../../src/route/delivery-scope';
import { HandlerRegistry } from '../../src/route/handler-registry';
import type { BoardHandler } from '../../src/route/handler-types';
import { boardSignature } from '../../src/testing/sign-delivery';
import { secretKeys } from '../../src/verify/secret-keys';
import type { SecretLookup } from '../../src/verify/secret-resolver';
import type { BoardSignature } from '../../src/verify/verify-signature';

const secret = 'board-protocol-secret-0123456789';
const otherSecret = 'another-board-secret-0123456789';
const NOW = 1_772_366_400_000;
const TS = NOW / 1000;
const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const FIXED = pathPattern('/webhooks/board', ['boardId']);
const PER_BOARD = pathPattern('/webhooks/boards/:boardId', ['boardId']);

function handlers(): BoardHandlers {
  return { byType: new HandlerRegistry<BoardHandler<never>>(), any: [] };
}

function fixed(h = handlers()) {
  return boardProtocol({ keys: secretKeys(secret) }, FIXED, 300, h);
}

function lookupOf(answer: (id: string) => ReturnType<SecretLookup['keysFor']>, secrets: readonly string[] = [secret]) {
  const keysFor = jest.fn(answer);
  const secretsOf = jest.fn((_id: string) => secrets);
  return { lookup: { keysFor, secretsOf } as unknown as SecretLookup, keysFor, secretsOf };
}

function event(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: ID, type: 'task.created', createdAt: '2026-03-01T12:00:00.000Z', sequence: 7, board: { id: 'b-1', name: 'B' }, task: { id: 't1' }, ...overrides };
}

function req(headers: Record<string, string> = {}, url = '/webhooks/board'): RequestFacts {
  return { headers, url };
}

function signed(body: Buffer, key = secret, timestamp = TS): BoardSignature & { boardId?: string } {
  return { claimed: Buffer.from(boardSignature(key, timestamp, body.toString()).slice('v1='.length), 'hex'), timestampText: String(timestamp), timestamp };
}

function refusal(run: () => unknown): ErrorCode {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SvcWebhookError);
    return (err as SvcWebhookError).code;
  }
  throw new Error('no refusal');
}

/** The unverified claims the refusal log line shows for `request`. */
function claimsLogged(request: RequestFacts): Record<string, unknown> {
  const lines: string[] = [];
  const log = new RefusalLog(pino({ level: 'info' }, { write: (s: string) => void lines.push(s) }), () => 0);
  log.refused(new SvcWebhookError('signature_mismatch', 'x'), request, {});
  return JSON.parse(lines[0]!).unverified;
}

const SIG: BoardSignature = { claimed: Buffer.alloc(32), timestampText: String(TS), timestamp: TS };
/** The signature of a delivery verified with the secrets of `boardId`. */
const by = (boardId: string): BoardSignature => ({ ...SIG, boardId }) as BoardSignature;

describe('the board protocol', () => {
  it('is the board webhook, checked against the board schema', () => {
    expect([fixed().webhook, fixed().schema]).toEqual(['board', 'board']);
  });

  it('reads the signature and the timestamp, within the tolerance it was given', () => {
    const protocol = boardProtocol({ keys: secretKeys(secret) }, FIXED, 60, handlers());
    const headers = { 'x-svc-signature': boardSignature(secret, TS, '{}'), 'x-svc-timestamp': String(TS) };
    expect(protocol.readSignature(req(headers), NOW + 60_000)).toMatchObject({ timestamp: TS, timestampText: String(TS) });
    expect(refusal(() => protocol.readSignature(req(headers), NOW + 61_000))).toBe('timestamp_out_of_tolerance');
  });

  describe('verifies with one fixed secret', () => {
    const body = Buffer.from(JSON.stringify(event()));

    it('synchronously, when the body carries its MAC', () => {
      expect(fixed().verify(signed(body), body, req())).toBeUndefined();
    });

    it('refuses a forged body, noting the board it claims for the refusal log', () => {
      const request = req();
      expect(refusal(() => fixed().verify(signed(body, otherSecret), body, request))).toBe('signature_mismatch');
      expect(claimsLogged(request)).toEqual({ boardId: 'b-1' });
    });
  });

  describe('verifies with the secrets of the board the delivery claims, through a lookup', () => {
    const body = Buffer.from(JSON.stringify(event()));

    it('synchronously when they are cached, and records the board it verified', () => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      const protocol = boardProtocol({ lookup }, FIXED, 300, handlers());
      const signature = signed(body);
      expect(protocol.verify(signature, body, req())).toBeUndefined();
      expect(keysFor).toHaveBeenCalledWith('b-1');
      expect(signature.boardId).toBe('b-1');
    });

    it('refuses a body signed with another secret, noting the claimed board', () => {
      const { lookup } = lookupOf(() => secretKeys(secret));
      const request = req();
      expect(refusal(() => boardProtocol({ lookup }, FIXED, 300, handlers()).verify(signed(body, otherSecret), body, request))).toBe('signature_mismatch');
      expect(claimsLogged(request)).toEqual({ boardId: 'b-1' });
    });

    it('waits for keys still being asked for; a forged body is refused after them, noting the claimed board', async () => {
      const { lookup } = lookupOf(() => Promise.resolve(secretKeys(secret)));
      const protocol = boardProtocol({ lookup }, FIXED, 300, handlers());
      await expect(protocol.verify(signed(body), body, req())).resolves.toBeUndefined();
      const request = req();
      await expect(protocol.verify(signed(body, otherSecret), body, request)).rejects.toMatchObject({ code: 'signature_mismatch' });
      expect(claimsLogged(request)).toEqual({ boardId: 'b-1' });
    });

    it('takes the board from the path, which must agree with the body', () => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      const protocol = boardProtocol({ lookup }, PER_BOARD, 300, handlers());
      const bare = Buffer.from(JSON.stringify(event({ board: undefined })));
      expect(protocol.verify(signed(bare), bare, req({}, '/webhooks/boards/b-9'))).toBeUndefined();
      expect(keysFor).toHaveBeenCalledWith('b-9');
      expect(refusal(() => protocol.verify(signed(body), body, req({}, '/webhooks/boards/b-9')))).toBe('board_id_mismatch');
    });

    it('refuses a body that names no board, noting none', () => {
      const { lookup } = lookupOf(() => secretKeys(secret));
      const bare = Buffer.from(JSON.stringify(event({ board: undefined })));
      const request = req();
      expect(refusal(() => boardProtocol({ lookup }, FIXED, 300, handlers()).verify(signed(bare), bare, request))).toBe('board_id_missing');
      expect(claimsLogged(request)).toEqual({});
    });
  });

  describe('reads the delivery of a verified event', () => {
    it('with its id, type, the event, the verified timestamp and sequence, and the verifying board', () => {
      const payload = event();
      expect(fixed().delivery(payload, req(), by('b-1'), NOW)).toEqual({ id: ID, kind: 'task.created', payload, event: payload, timestamp: TS, sequence: 7, verifiedBoard: 'b-1' });
      expect(fixed().delivery(event(), req(), SIG, NOW).verifiedBoard).toBeUndefined();
    });

    it('with a sequence sent as decimal text made a number in the event the handlers get', () => {
      const payload = event({ sequence: '42' });
      const delivery = fixed().delivery(payload, req(), SIG, NOW);
      expect([delivery.sequence, payload.sequence]).toEqual([42, 42]);
    });

    it('leaves a numeric sequence as it is', () => {
      const payload = Object.freeze(event({ sequence: 0 }));
      expect(fixed().delivery(payload, req(), SIG, NOW).sequence).toBe(0);
    });

    it('with its id in canonical form, matched against X-Svc-Delivery in that form', () => {
      expect(fixed().delivery(event({ id: ID.toUpperCase() }), req({ 'x-svc-delivery': ID.toUpperCase() }), SIG, NOW).id).toBe(ID);
    });

    it.each([
      ['X-Svc-Delivery names another delivery', { 'x-svc-delivery': 'other' }, 'delivery_id_mismatch'],
      ['X-Svc-Delivery is sent twice', { 'x-svc-delivery': `${ID}, ${ID}` }, 'delivery_id_mismatch'],
      ['X-Svc-Event names another type', { 'x-svc-event': 'task.deleted' }, 'event_type_mismatch'],
    ])('refuses an event whose %s', (_what, headers, code) => {
      expect(refusal(() => fixed().delivery(event(), req(headers), SIG, NOW))).toBe(code);
    });

    it('refuses an event that names another board than the one that verified it; one naming none is handled', () => {
      expect(refusal(() => fixed().delivery(event(), req(), by('b-2'), NOW))).toBe('board_id_mismatch');
      expect(fixed().delivery(event({ board: undefined }), req(), by('b-2'), NOW).verifiedBoard).toBe('b-2');
      expect(fixed().delivery(event({ board: 'b-1' }), req(), by('b-2'), NOW).verifiedBoard).toBe('b-2');
    });

    it.each([
      ['an array', [event()]],
      ['null', null],
      ['without `id`', event({ id: undefined })],
      ['with a numeric `id`', event({ id: 7 })],
      ['with an empty `id` (every such event would share one de-dup key)', event({ id: '' })],
      ['without `type`', event({ type: undefined })],
      ['with a numeric `type`', event({ type: 5 })],
      ['with a negative `sequence`', event({ sequence: -1 })],
      ['with a fractional `sequence`', event({ sequence: 1.5 })],
      ['with a NaN `sequence`', event({ sequence: Number.NaN })],
      ['with a null `sequence`', event({ sequence: null })],
      ['with an empty-string `sequence`', event({ sequence: '' })],
      ['with a hexadecimal `sequence`', event({ sequence: '0x1f' })],
      ['without `sequence`', event({ sequence: undefined })],
    ])('refuses an event %s: 400 schema_violation', (_what, payload) => {
      expect(refusal(() => fixed().delivery(payload, req(), SIG, NOW))).toBe('schema_violation');
    });
  });

  describe('the sequence number', () => {
    it.each([
      [0, 0],
      [42, 42],
      ['42', 42],
      ['0', 0],
      ['999999999999999', 999_999_999_999_999],
      [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    ])('%p is %p', (value, expected) => {
      expect(sequenceNumber(value)).toBe(expected);
    });

    it.each([[-1], [1.5], [Number.NaN], [null], [''], ['0x1f'], ['1e3'], ['+7'], ['-1'], [' 7'], ['7 '], ['1000000000000000'], [2 ** 53], [true], [[7]], [undefined], [Infinity]])(
      '%p is none',
      (value) => {
        expect(sequenceNumber(value)).toBeUndefined();
      },
    );
  });

  describe('routes a delivery', () => {
    function contextOf(protocol: ReturnType<typeof fixed>, delivery: BoardDelivery, logger = pino({ level: 'silent' })): DeliveryScope {
      return protocol.context(delivery, [delivery.id, delivery.kind, undefined, undefined, NOW, logger]);
    }

    it('to the handlers of its type, then onAny, each with the event and the context', async () => {
      const h = handlers();
      const order: string[] = [];
      const seen: unknown[] = [];
      const record =
        (name: string) =>
        (e: unknown, ctx: unknown): void => {
          order.push(name);
          seen.push(e, ctx);
        };
      h.any.push(record('any'));
      h.byType.add('task.created', record('type'), () => undefined);
      h.byType.add('task.deleted', record('other type'), () => undefined);
      const protocol = fixed(h);
      const delivery = protocol.delivery(event(), req(), SIG, NOW);
      const ctx = contextOf(protocol, delivery);
      for (const call of protocol.calls(delivery, ctx)) await call();
      expect(order).toEqual(['type', 'any']);
      expect(seen).toEqual([delivery.event, ctx, delivery.event, ctx]);
    });

    it('to onAny alone when its type has no handlers', async () => {
      const h = handlers();
      const any = jest.fn();
      h.any.push(any);
      const protocol = fixed(h);
      const delivery = protocol.delivery(event(), req(), SIG, NOW);
      const calls = protocol.calls(delivery, contextOf(protocol, delivery));
      expect(calls).toHaveLength(1);
      await calls[0]!();
      expect(any).toHaveBeenCalledTimes(1);
    });

    it('gives the handlers a board context: webhook, type, event, timestamp, sequence', () => {
      const protocol = fixed();
      const payload = event();
      const delivery = protocol.delivery(payload, req(), SIG, NOW);
      expect(contextOf(protocol, delivery)).toMatchObject({ webhook: 'board', type: 'task.created', event: payload, timestamp: TS, sequence: 7, deliveryId: ID });
    });
  });

  describe("names the secrets of the board that verified a delivery, dropped from the lines about it (secretsOf)", () => {
    const boardSecret = 'the-secret-of-board-b1-0123456789';

    it('with a lookup: the secrets of the board that verified the delivery', () => {
      const { lookup, secretsOf } = lookupOf(() => secretKeys(boardSecret), [boardSecret]);
      const protocol = boardProtocol({ lookup }, FIXED, 300, handlers());
      const delivery = protocol.delivery(event(), req(), by('b-1'), NOW);
      expect(protocol.secretsOf(delivery)).toEqual([boardSecret]);
      expect(secretsOf).toHaveBeenCalledWith('b-1');
    });

    it('with a lookup and no verifying board: none, and asks for none', () => {
      const { lookup, secretsOf } = lookupOf(() => secretKeys(boardSecret), [boardSecret]);
      const protocol = boardProtocol({ lookup }, FIXED, 300, handlers());
      const delivery = protocol.delivery(event(), req(), SIG, NOW);
      expect(protocol.secretsOf(delivery)).toEqual([]);
      expect(secretsOf).not.toHaveBeenCalled();
    });

    it('with a fixed secret: none (the webhook\'s own logger drops it)', () => {
      const protocol = fixed();
      expect(protocol.secretsOf(protocol.delivery(event(), req(), by('b-1'), NOW))).toEqual([]);
    });
  });
});
