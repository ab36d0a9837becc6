import type { BoardDelivery, BotDelivery } from '../../../src/internal/delivery/delivery';
import { boardJobs, botJobs } from '../../../src/inbox/webhook-jobs';
import { headersOnly } from '../../../src/inbox/inbox-job';
import type { InboxSettings } from '../../../src/inbox/inbox-options';

const req = { rawHeaders: ['X-Svc-Delivery', 'd1', 'X-Svc-Signature', 'v1=aa'], headers: {} };
const body = Buffer.from('{"id":"d1","é":1}');

function boardDelivery(change: Partial<BoardDelivery> & { board?: unknown } = {}): BoardDelivery {
  const { board, ...rest } = change;
  const event = 'board' in change ? { board } : { board: { id: 'b1' } };
  // The board the delivery is for, as its checks make it: the verifying board, else the event's board id.
  const named = (event.board as { id?: unknown } | null | undefined)?.id;
  const boardId = rest.verifiedBy ?? (typeof named === 'string' ? named : '');
  return { id: 'd1', kind: 'task.created', payload: {}, event: event as never, timestamp: 1_700_000_000, sequence: 5, verifiedBy: undefined, boardId, ...rest };
}

const settings = (ordered: InboxSettings['ordered']) => ({ ordered }) as InboxSettings;

describe('the inbox job of a board delivery', () => {
  it('keeps the delivery, its body as text, the headers that matter and when it came, naming no verifying board without a secret resolver', () => {
    expect(boardJobs(settings(false)).jobOf({ delivery: boardDelivery(), body, request: req, receivedAt: 42 })).toStrictEqual({
      webhook: 'board',
      deliveryId: 'd1',
      kind: 'task.created',
      body: '{"id":"d1","é":1}',
      headers: { 'x-svc-delivery': 'd1' },
      receivedAt: 42,
      timestamp: 1_700_000_000,
    });
  });

  it('names the board whose secret verified it', () => {
    expect(boardJobs(settings(false)).jobOf({ delivery: boardDelivery({ verifiedBy: 'b1' }), body, request: req, receivedAt: 42 }).verifiedBy).toBe('b1');
  });

  it("places an event in its board's sequence when board order is on, ordered or only passing by kind", () => {
    const job = boardJobs(settings(new Set(['task.created']))).jobOf({ delivery: boardDelivery(), body, request: req, receivedAt: 42 });
    expect(job).toMatchObject({ board: 'b1', sequence: 5, ordered: true });
    expect(boardJobs(settings(new Set(['task.deleted']))).jobOf({ delivery: boardDelivery(), body, request: req, receivedAt: 42 })).toMatchObject({
      board: 'b1',
      sequence: 5,
      ordered: false,
    });
    expect(boardJobs(settings(true)).jobOf({ delivery: boardDelivery({ kind: 'anything' }), body, request: req, receivedAt: 42 })).toMatchObject({
      ordered: true,
    });
    expect(boardJobs(settings(true)).jobOf({ delivery: boardDelivery({ sequence: 1 }), body, request: req, receivedAt: 42 })).toMatchObject({ sequence: 1 });
  });

  it.each([
    ['board order is off', false, {}],
    ['a ping (sequence 0)', true, { sequence: 0 }],
    ['no board', true, { board: undefined }],
    ['a board of null', true, { board: null }],
    ['a board id that is not text', true, { board: { id: 7 } }],
    ['an empty board id', true, { board: { id: '' } }],
  ])('keeps no place in a sequence for %s', (_what, ordered, change) => {
    const job = boardJobs(settings(ordered as boolean)).jobOf({ delivery: boardDelivery(change as never), body, request: req, receivedAt: 42 });
    expect(['board' in job, 'sequence' in job, 'ordered' in job]).toEqual([false, false, false]);
  });
});

describe('the inbox job of a bot delivery', () => {
  const delivery = { id: 'u1', kind: 'messageCreate', payload: {}, update: {} as never, data: {}, verifiedBy: undefined, botId: 'bot7' } as BotDelivery;

  it('keeps the delivery, and with a secret resolver the bot that verified it', () => {
    expect(botJobs().jobOf({ delivery, body, request: req, receivedAt: 42 })).toEqual({
      webhook: 'bot',
      deliveryId: 'u1',
      kind: 'messageCreate',
      body: '{"id":"d1","é":1}',
      headers: { 'x-svc-delivery': 'd1' },
      receivedAt: 42,
    });
    expect(botJobs().jobOf({ delivery: { ...delivery, verifiedBy: 'bot7' }, body, request: req, receivedAt: 42 }).verifiedBy).toBe('bot7');
  });
});

describe('the request a worker rebuilds from a job', () => {
  it('has the kept headers, as a raw list too', () => {
    expect(headersOnly({ 'x-svc-delivery': 'd1', 'x-svc-event': 'task.created' })).toEqual({
      headers: { 'x-svc-delivery': 'd1', 'x-svc-event': 'task.created' },
      rawHeaders: ['x-svc-delivery', 'd1', 'x-svc-event', 'task.created'],
    });
  });
});
