import type { DeliveryRecord } from '../../../src/route/handler-types';
import { boardEvent } from '../../../src/testing/example-events';
import { answerOf, ignoredAnswer } from '../../../src/receive/outcome';
import { codeOf, requestOf, settle, setup } from './receiver-harness';

const BOT_ID = '5d3c9a52-7f0e-4b8a-9c1d-2e6f8a9b0c1d';
const SECRET_PART = 'Zq8_rT3-kLm9NpQ2sUvWxY0aBcDeFgHiJkLmNoPqRsT';
const TOKEN = `svc_bot_${BOT_ID}_${SECRET_PART}`;

const self = { id: BOT_ID, is_bot: true, name: 'Sync bot' };
const otherBot = { id: '0b1c2d3e-4f50-4617-8829-3a4b5c6d7e8f', is_bot: true, name: 'Another bot' };
const person = { id: '7b3ab64a-91a7-4fe9-8a0a-4fd1854ae1d3', is_bot: false, name: 'Jonas Weber' };
const rule = { id: 'r-1', name: 'Close when merged' };

const updated = (actor: object | null, ruleSet: object | null = null) => boardEvent('task.updated', { actor, rule: ruleSet } as never);

describe('the receiver with ignore', () => {
  function guarded(ignore: Record<string, unknown> = { self: TOKEN }) {
    const records: DeliveryRecord[] = [];
    const s = setup({ options: { ignore }, listeners: [(r) => records.push(r)] });
    const handler = jest.fn();
    s.on('task.updated', handler);
    const any = jest.fn();
    s.any(any);
    return { ...s, handler, any, records };
  }

  it('answers the bot\'s own change 200 {"ok":true,"ignored":"self"} without claiming it or running a handler', async () => {
    const { send, handler, any, store } = guarded();
    expect(await send(requestOf(updated(self)))).toEqual({ status: 200, body: '{"ok":true,"ignored":"self"}' });
    expect(handler).not.toHaveBeenCalled();
    expect(any).not.toHaveBeenCalled();
    expect(store.claim).not.toHaveBeenCalled();
  });

  it('answers a repeat of an ignored event ignored again: ignoring is idempotent, nothing was recorded', async () => {
    const { send, store } = guarded();
    const req = () => requestOf(event);
    const event = updated(self);
    expect((await send(req())).body).toBe('{"ok":true,"ignored":"self"}');
    expect((await send(req())).body).toBe('{"ok":true,"ignored":"self"}');
    expect(store.claim).not.toHaveBeenCalled();
  });

  it("handles a person's change, with ctx.origin person", async () => {
    const { send, handler, store } = guarded();
    expect(await send(requestOf(updated(person)))).toEqual({ status: 200, body: '{"ok":true}' });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(handler.mock.calls[0][1].origin).toBe('person');
    expect(store.claim).toHaveBeenCalledTimes(1);
  });

  it("handles another bot's change with self only, with ctx.origin bot", async () => {
    const { send, handler } = guarded();
    expect((await send(requestOf(updated(otherBot)))).body).toBe('{"ok":true}');
    expect(handler.mock.calls[0][1].origin).toBe('bot');
  });

  it('answers every bot\'s change {"ignored":"bot"} with bots: true', async () => {
    const { send, handler } = guarded({ bots: true });
    expect((await send(requestOf(updated(otherBot)))).body).toBe('{"ok":true,"ignored":"bot"}');
    expect((await send(requestOf(updated(person)))).body).toBe('{"ok":true}');
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('answers a rule\'s change {"ignored":"rule"} with rules: true, and handles server changes with ctx.origin server', async () => {
    const { send, handler } = guarded({ rules: true });
    expect((await send(requestOf(updated(null, rule)))).body).toBe('{"ok":true,"ignored":"rule"}');
    expect(handler).not.toHaveBeenCalled();
    expect((await send(requestOf(updated(null)))).body).toBe('{"ok":true}');
    expect(handler.mock.calls[0][1].origin).toBe('server');
  });

  it("handles a rule's change without rules: true, with ctx.origin rule", async () => {
    const { send, handler } = guarded({ self: BOT_ID });
    expect((await send(requestOf(updated(null, rule)))).body).toBe('{"ok":true}');
    expect(handler.mock.calls[0][1].origin).toBe('rule');
  });

  it('refuses a forged delivery with the bot as actor (401): only an authentic delivery is ignored', async () => {
    const { send, handler } = guarded();
    const answer = await send(requestOf(updated(self), {}, 'another-secret-0123456789abcdef'));
    expect(answer.status).toBe(401);
    expect(codeOf(answer)).toBe('signature_mismatch');
    expect(handler).not.toHaveBeenCalled();
  });

  it('refuses a delivery that fails the schema (400) before it could be ignored', async () => {
    const { send } = guarded();
    const event = { ...updated(self), sequence: 'many' };
    const answer = await send(requestOf(event));
    expect(answer.status).toBe(400);
    expect(codeOf(answer)).toBe('schema_violation');
  });

  it('tells onDelivery listeners: outcome ignored, why, status 200, verified, the payload', async () => {
    const { send, records } = guarded();
    const event = updated(self);
    await send(requestOf(event));
    await settle();
    expect(records).toHaveLength(1);
    expect(records[0]).toEqual({
      webhook: 'board',
      deliveryId: event.id,
      kind: 'task.updated',
      outcome: 'ignored',
      ignored: 'self',
      status: 200,
      durationMs: expect.any(Number),
      receivedAt: expect.any(Number),
      verified: true,
      payload: event,
    });
  });

  it('logs one debug line "delivery ignored" with why, and never the token', async () => {
    const { send, lines } = guarded();
    const event = updated(self);
    await send(requestOf(event));
    const line = lines().find((l) => l.msg === 'delivery ignored');
    expect(line).toMatchObject({ level: 20, deliveryId: event.id, kind: 'task.updated', outcome: 'ignored', ignored: 'self', status: 200 });
    expect(lines().filter((l) => l.msg === 'delivery received')).toEqual([]);
    expect(JSON.stringify(lines())).not.toContain(SECRET_PART);
  });

  it('hands no ignored event to the inbox, and answers it without a queue outcome', async () => {
    const handoff = jest.fn(async () => undefined);
    const records: DeliveryRecord[] = [];
    const { send, store } = setup({ options: { ignore: { self: BOT_ID } }, handoff, listeners: [(r) => records.push(r)] });
    expect((await send(requestOf(updated(self)))).body).toBe('{"ok":true,"ignored":"self"}');
    expect(handoff).not.toHaveBeenCalled();
    expect(store.claim).not.toHaveBeenCalled();
    expect((await send(requestOf(updated(person)))).body).toBe('{"ok":true}');
    expect(handoff).toHaveBeenCalledTimes(1);
    await settle();
    expect(records.map((r) => [r.outcome, r.queue])).toEqual([
      ['ignored', undefined],
      ['enqueued', 'enqueued'],
    ]);
  });

  it('ignores nothing without the option', async () => {
    const { send, handler } = guarded({});
    expect((await send(requestOf(updated(self)))).body).toBe('{"ok":true}');
    expect(handler.mock.calls[0][1].origin).toBe('bot');
  });
});

describe('ignoredAnswer', () => {
  it('is 200 with the reason, without Retry-After, for each reason', () => {
    for (const reason of ['self', 'bot', 'rule'] as const) {
      expect(ignoredAnswer(reason)).toEqual({ status: 200, body: `{"ok":true,"ignored":"${reason}"}` });
      expect(JSON.parse(ignoredAnswer(reason).body)).toEqual({ ok: true, ignored: reason });
    }
  });

  it('leaves the other answers as they were', () => {
    expect(answerOf('handled')).toEqual({ status: 200, body: '{"ok":true}' });
    expect(answerOf('duplicate')).toEqual({ status: 200, body: '{"ok":true,"duplicate":true}' });
  });
});
