import { createFakeSvc, type FakeSvc } from '../../src/testing';
import { BOARD_SECRET, BOT_SECRET, startReceiver, type TestReceiver } from './receiver';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

async function connectBoard(svc: FakeSvc, url: string, boardId = svc.board.id, token = svc.person.token): Promise<Response> {
  return fetch(`${svc.baseUrl}/api/boards/${boardId}/webhook`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, secret: BOARD_SECRET }),
  });
}

async function connectBot(svc: FakeSvc, url: string): Promise<Response> {
  return fetch(`${svc.baseUrl}/api/bots/me/webhook`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${svc.bot.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, secret: BOT_SECRET }),
  });
}

/** Offsets from the first attempt, in minutes, of every attempt of one delivery. */
function attemptMinutes(svc: FakeSvc, id: string): number[] {
  const at = svc.audit
    .attempts()
    .filter((a) => a.deliveryId === id)
    .map((a) => a.at);
  return at.map((t) => (t - at[0]!) / MINUTE);
}

describe('the emulator delivering to a receiver made with this library', () => {
  let svc: FakeSvc;
  let receiver: TestReceiver;

  beforeEach(async () => {
    receiver = await startReceiver();
    svc = await createFakeSvc({ clock: 'manual', allowLoopback: true });
    expect((await connectBoard(svc, receiver.boardUrl)).status).toBe(200);
  });
  afterEach(async () => {
    await svc.close();
    await receiver.close();
  });

  describe('when the receiver answers 200', () => {
    it('should sign board events so that svcBoardWebhook verifies them, in sequence from 1', async () => {
      const first = svc.emitBoardEvent({ type: 'task.created', overrides: { task: { title: 'Ship it' } } });
      const second = svc.emitBoardEvent({ type: 'task.comment.created' });
      await svc.advance(0);
      expect(receiver.board).toEqual([
        { id: first.id, sequence: 1, type: 'task.created' },
        { id: second.id, sequence: 2, type: 'task.comment.created' },
      ]);
      svc.audit.assertAllDelivered();
      expect(svc.webhook({ boardId: svc.board.id })).toMatchObject({
        enabled: true,
        pending: 0,
        lastOkAt: new Date(svc.now()).toISOString(),
        failingSince: null,
      });
    });

    it("should send svc's headers with every board delivery", async () => {
      const { id } = svc.emitBoardEvent({ type: 'task.updated' });
      await svc.advance(0);
      const headers = receiver.requests[0]!.headers;
      expect(headers).toMatchObject({
        'user-agent': 'Svc-Webhook/1.0',
        'x-svc-event': 'task.updated',
        'x-svc-delivery': id,
        'x-svc-webhook-version': '1',
        'content-type': 'application/json',
      });
      expect(Math.abs(Number(headers['x-svc-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
      expect(headers['x-svc-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    });

    it('should sign bot updates so that svcBotWebhook verifies them', async () => {
      expect((await connectBot(svc, receiver.botUrl)).status).toBe(200);
      const { id } = svc.emitBotUpdate({ kind: 'messageCreate', data: { message: { content: 'hello' } } });
      await svc.advance(0);
      expect(receiver.bot).toEqual([id]);
      expect(receiver.requests[0]!.headers).toMatchObject({
        'user-agent': 'SvcBot-Webhook/1.0',
        'x-svc-delivery': id,
        'x-svc-signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
      });
    });

    it('should carry actor and rule as the spec shows them for a person, a bot, a rule and the server', async () => {
      for (const by of ['person', 'bot', 'rule', 'server'] as const) svc.emitBoardEvent({ type: 'task.updated', by });
      await svc.advance(0);
      const authors = receiver.boardEvents.map((e: any) => [e.actor === null ? null : e.actor.is_bot, e.rule === null ? null : typeof e.rule.name]);
      expect(authors).toEqual([
        [false, null],
        [true, null],
        [null, 'string'],
        [null, null],
      ]);
      expect(
        receiver.boardEvents.every((e: any) => e.board.id === svc.board.id && e.task.board_id === svc.board.id && e.workspace_id === svc.board.workspaceId),
      ).toBe(true);
    });

    it('should deliver a ping synchronously with sequence 0 and answer { ok, status, error }', async () => {
      const res = await fetch(`${svc.baseUrl}/api/boards/${svc.board.id}/webhook/ping`, {
        method: 'POST',
        headers: { authorization: `Bearer ${svc.person.token}` },
      });
      expect(await res.json()).toEqual({ ok: true, status: 200, error: '' });
      expect(receiver.board).toEqual([{ id: expect.any(String), sequence: 0, type: 'ping' }]);
    });
  });

  describe('when the receiver keeps failing', () => {
    it('should retry after 1, 2, 4 … minutes, at most an hour apart, and give up after a day', async () => {
      receiver.answer({ status: 503 });
      const { id } = svc.emitBoardEvent({ type: 'task.created' });
      await svc.advance(DAY + HOUR);
      const minutes = attemptMinutes(svc, id);
      expect(minutes.slice(0, 9)).toEqual([0, 1, 3, 7, 15, 31, 63, 123, 183]);
      const gaps = minutes.slice(1).map((m, i) => m - minutes[i]!);
      expect(Math.max(...gaps)).toBe(60);
      expect(minutes.at(-1)!).toBeLessThan(24 * 60);
      expect(svc.audit.deliveries()).toEqual([expect.objectContaining({ id, status: 'expired', attempts: minutes.length })]);
    });

    it('should count a redirect as a failure and not follow it', async () => {
      receiver.answer({ status: 302 });
      svc.emitBoardEvent({ type: 'task.created' });
      await svc.advance(0);
      expect(svc.webhook({ boardId: svc.board.id })).toMatchObject({
        lastError: 'redirect 302 not followed',
        failingSince: new Date(svc.now()).toISOString(),
        pending: 1,
      });
      expect(receiver.requests).toHaveLength(1);
      receiver.answer(undefined);
      await svc.advance(MINUTE);
      expect(svc.webhook({ boardId: svc.board.id })).toMatchObject({ failingSince: null, lastError: 'redirect 302 not followed', pending: 0 });
      expect(receiver.board).toHaveLength(1);
    });

    it('should fail an attempt that gets no answer within 10 seconds', async () => {
      receiver.answer('hang');
      svc.emitBoardEvent({ type: 'task.created' });
      const started = Date.now();
      await svc.advance(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_900);
      expect(svc.webhook({ boardId: svc.board.id })).toMatchObject({ lastError: 'no answer within 10 s', pending: 1 });
    }, 20_000);

    it('should disable the webhook after a whole day of failures and drop its queue; a PUT re-enables it', async () => {
      receiver.answer({ status: 500 });
      const start = svc.now();
      for (let i = 0; i < 3; i++) svc.emitBoardEvent({ type: 'task.updated' });
      await svc.advance(DAY - MINUTE);
      // The first three lived their day out (their last retry came before it ended); the webhook is still on.
      expect(svc.webhook({ boardId: svc.board.id })).toMatchObject({ enabled: true, pending: 0 });
      svc.emitBoardEvent({ type: 'task.updated' });
      await svc.advance(0);
      expect(svc.webhook({ boardId: svc.board.id })).toMatchObject({ enabled: true, pending: 1 });
      await svc.advance(2 * MINUTE);
      expect(svc.webhook({ boardId: svc.board.id })).toEqual(
        expect.objectContaining({
          enabled: false,
          disabledAt: new Date(start + DAY).toISOString(),
          failingSince: new Date(start).toISOString(),
          pending: 0,
          lastError: 'receiver answered 500',
        }),
      );
      expect(svc.audit.deliveries().map((d) => d.status)).toEqual(['expired', 'expired', 'expired', 'dropped']);
      expect(svc.emitBoardEvent({ type: 'task.updated' }).queued).toBe(false);
      receiver.answer(undefined);
      expect((await connectBoard(svc, receiver.boardUrl)).status).toBe(200);
      expect(svc.webhook({ boardId: svc.board.id })).toMatchObject({ enabled: true, disabledAt: null, failingSince: null, pending: 0 });
      const next = svc.emitBoardEvent({ type: 'task.updated' });
      await svc.advance(0);
      expect(receiver.board.map((e) => e.id)).toEqual([next.id]);
    });

    it('should keep a webhook that recovers within the day', async () => {
      receiver.answer({ status: 500 });
      svc.emitBoardEvent({ type: 'task.updated' });
      await svc.advance(20 * HOUR);
      receiver.answer(undefined);
      await svc.advance(5 * HOUR);
      expect(svc.webhook({ boardId: svc.board.id })).toMatchObject({ enabled: true, failingSince: null, pending: 0 });
      expect(receiver.board).toHaveLength(1);
    });
  });

  describe('when the plan drops below Business', () => {
    it('should pause the board webhook, queue no new events, and resume with new events only', async () => {
      svc.setPlan('free');
      expect(svc.webhook({ boardId: svc.board.id })).toMatchObject({ pausedReason: 'PLAN', enabled: true });
      const lost = svc.emitBoardEvent({ type: 'task.created' });
      expect(lost.queued).toBe(false);
      await svc.advance(HOUR);
      expect(receiver.board).toEqual([]);
      svc.setPlan('business');
      const kept = svc.emitBoardEvent({ type: 'task.created' });
      await svc.advance(0);
      expect(receiver.board).toEqual([{ id: kept.id, sequence: 2, type: 'task.created' }]);
      expect(svc.webhook({ boardId: svc.board.id })!.pausedReason).toBeNull();
    });
  });

  describe('when a webhook is deleted', () => {
    it("should mark the board webhook's queue failed and drop the bot webhook's", async () => {
      expect((await connectBot(svc, receiver.botUrl)).status).toBe(200);
      receiver.answer({ status: 500 });
      svc.emitBoardEvent({ type: 'task.created' });
      svc.emitBotUpdate({ kind: 'messageCreate' });
      await svc.advance(0);
      const auth = (token: string) => ({ method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      expect((await fetch(`${svc.baseUrl}/api/boards/${svc.board.id}/webhook`, auth(svc.person.token))).status).toBe(204);
      expect((await fetch(`${svc.baseUrl}/api/bots/me/webhook`, auth(svc.bot.token))).status).toBe(204);
      expect(svc.audit.deliveries().map((d) => [d.kind, d.status])).toEqual([
        ['board', 'failed'],
        ['bot', 'dropped'],
      ]);
      const before = receiver.requests.length;
      await svc.advance(HOUR);
      expect(receiver.requests).toHaveLength(before);
    });
  });
});

describe('where the emulator delivers', () => {
  it('should forward a registered public url to the local one it maps to', async () => {
    const receiver = await startReceiver();
    const svc = await createFakeSvc({ clock: 'manual', forward: { 'https://hooks.example.com': receiver.url } });
    try {
      expect((await connectBoard(svc, 'https://hooks.example.com/webhooks/board')).status).toBe(200);
      const { id } = svc.emitBoardEvent({ type: 'task.created' });
      await svc.advance(0);
      expect(receiver.board.map((e) => e.id)).toEqual([id]);
    } finally {
      await svc.close();
      await receiver.close();
    }
  });

  it('should send nothing to a host outside its allowlist, and say so in lastError', async () => {
    const svc = await createFakeSvc({ clock: 'manual' });
    try {
      expect((await connectBoard(svc, 'https://hooks.example.com/webhooks/board')).status).toBe(200);
      svc.emitBoardEvent({ type: 'task.created' });
      await svc.advance(0);
      expect(svc.webhook({ boardId: svc.board.id })!.lastError).toBe("not sent: hooks.example.com is outside the emulator's allowedHosts");
      expect(svc.audit.attempts()).toEqual([expect.objectContaining({ ok: false, status: null })]);
    } finally {
      await svc.close();
    }
  });
});
