import type { Verified } from '../../../src/internal/delivery/delivery';
import { boardDelivery, sequenceNumber } from '../../../src/validate/board-delivery';
import { boardEvent } from '../../../src/testing/example-events';
import { refusal } from '../../support/refusal';

const NOW = 1_772_366_400_000;
const TS = NOW / 1000;
const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';

function event(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: ID,
    type: 'task.created',
    createdAt: '2026-03-01T12:00:00.000Z',
    sequence: 7,
    board: { id: 'b-1', name: 'B' },
    task: { id: 't1' },
    ...overrides,
  };
}

/** Verified with one secret for the webhook, or with the secrets of `by`. */
const fixedSig: Verified = { by: undefined, timestamp: TS };
const by = (boardId: string): Verified => ({ by: boardId, timestamp: TS });

function check(payload: unknown, headers: Record<string, string> = {}, verified: Verified = fixedSig) {
  return boardDelivery(payload, { request: { headers }, verified, nowMs: NOW });
}

describe('the checks of a verified board event', () => {
  it('give its id, type, the event, the verified timestamp and sequence, the verifying board and the board it is for', () => {
    const payload = event();
    expect(check(payload, {}, by('b-1'))).toEqual({
      id: ID,
      kind: 'task.created',
      payload,
      event: payload,
      timestamp: TS,
      sequence: 7,
      verifiedBy: 'b-1',
      boardId: 'b-1',
    });
    expect(check(event())).toMatchObject({ verifiedBy: undefined, boardId: 'b-1' });
  });

  it('with one secret, the board it is for is the signed `board.id` (empty when a body without one was let through)', () => {
    expect(check(event({ board: { id: 'b-7' } })).boardId).toBe('b-7');
    expect(check(event({ board: undefined })).boardId).toBe('');
  });

  it('with a sequence sent as decimal text made a number in the event the handlers get', () => {
    const payload = event({ sequence: '42' });
    const delivery = check(payload);
    expect([delivery.sequence, payload.sequence]).toEqual([42, 42]);
  });

  it('leave a numeric sequence as it is', () => {
    const payload = Object.freeze(event({ sequence: 0 }));
    expect(check(payload).sequence).toBe(0);
  });

  it('give its id in canonical form, matched against X-Svc-Delivery in that form', () => {
    expect(check(event({ id: ID.toUpperCase() }), { 'x-svc-delivery': ID.toUpperCase() }).id).toBe(ID);
  });

  it.each([
    ['X-Svc-Delivery names another delivery', { 'x-svc-delivery': 'other' }, 'delivery_id_mismatch'],
    ['X-Svc-Delivery is sent twice', { 'x-svc-delivery': `${ID}, ${ID}` }, 'delivery_id_mismatch'],
    ['X-Svc-Event names another type', { 'x-svc-event': 'task.deleted' }, 'event_type_mismatch'],
  ])('refuse an event whose %s', (_what, headers, code) => {
    expect(refusal(() => check(event(), headers))).toBe(code);
  });

  it('refuse an event that names another board than the one that verified it; one naming none is for the verifying board', () => {
    expect(refusal(() => check(event(), {}, by('b-2')))).toBe('board_id_mismatch');
    expect(check(event({ board: undefined }), {}, by('b-2'))).toMatchObject({ verifiedBy: 'b-2', boardId: 'b-2' });
    expect(check(event({ board: 'b-1' }), {}, by('b-2'))).toMatchObject({ verifiedBy: 'b-2', boardId: 'b-2' });
  });

  describe('bind the nested references to the board (one board admin cannot speak for another board)', () => {
    const real = () =>
      boardEvent('task.created') as unknown as Record<string, unknown> & {
        board: { id: string; key: string };
        task: Record<string, unknown>;
        workspace_id: string;
      };

    it.each(['task.created', 'task.updated', 'task.moved_in', 'task.moved_out', 'task.comment.created', 'ping'] as const)("accept svc's own %s", (type) => {
      const payload = boardEvent(type) as unknown as { board: { id: string } };
      expect(check(payload, {}, by(payload.board.id)).boardId).toBe(payload.board.id);
    });

    it('refuse a task whose board_id is another board, with a resolver and with one secret', () => {
      const payload = real();
      payload.task.board_id = '11111111-2222-4333-8444-555555555555';
      expect(refusal(() => check(payload, {}, by(payload.board.id)))).toBe('board_reference_mismatch');
      expect(refusal(() => check(payload))).toBe('board_reference_mismatch');
    });

    it("refuse a task key that is not the board's key, a hyphen and a number", () => {
      for (const key of ['OPS-42', 'ENGX-42', 'ENG42', 'ENG-', 'ENG-4x', 'ENG--4']) {
        const payload = real();
        payload.task.key = key;
        expect([key, refusal(() => check(payload, {}, by(payload.board.id)))]).toEqual([key, 'board_reference_mismatch']);
      }
    });

    it("refuse a task of another workspace than the event's", () => {
      const payload = real();
      payload.task.workspace_id = '99999999-2222-4333-8444-555555555555';
      expect(refusal(() => check(payload, {}, by(payload.board.id)))).toBe('board_reference_mismatch');
    });

    it('leave references the contract leaves empty unchecked: an empty task workspace, a missing task, a board without key', () => {
      const payload = real();
      payload.task.workspace_id = '';
      expect(check(payload, {}, by(payload.board.id)).kind).toBe('task.created');
      expect(check(event({ task: null }), {}, by('b-1')).kind).toBe('task.created');
      expect(check(event({ task: { board_id: 'b-1', key: 'X-1' } }), {}, by('b-1')).kind).toBe('task.created');
    });

    it('leave a task key unchecked when the board sends an empty key', () => {
      const payload = real();
      payload.board.key = '';
      payload.task.key = 'ENG-42';
      expect(check(payload, {}, by(payload.board.id)).kind).toBe('task.created');
    });
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
  ])('refuse an event %s: 400 schema_violation', (_what, payload) => {
    expect(refusal(() => check(payload))).toBe('schema_violation');
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

  it.each([
    [-1],
    [1.5],
    [Number.NaN],
    [null],
    [''],
    ['0x1f'],
    ['1e3'],
    ['+7'],
    ['-1'],
    [' 7'],
    ['7 '],
    ['1000000000000000'],
    [2 ** 53],
    [true],
    [[7]],
    [undefined],
    [Infinity],
  ])('%p is none', (value) => {
    expect(sequenceNumber(value)).toBeUndefined();
  });
});
