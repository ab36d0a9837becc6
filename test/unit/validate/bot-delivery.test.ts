import { SvcWebhookError } from '../../../src/errors';
import type { Verified } from '../../../src/internal/delivery/delivery';
import { BOT_UPDATE_FUTURE_MS, botDeliveryCheck } from '../../../src/validate/bot-delivery';
import { refusal } from '../../support/refusal';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const MAX_AGE = 60_000;
const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const BOT = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const FIXED: Verified = { by: undefined };

function update(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: ID,
    botUserId: 'bot-1',
    createdAt: new Date(NOW - 1000).toISOString(),
    event: { messageCreate: { workspaceId: 'w', message: { id: 'm1', text: 'hi' } } },
    ...overrides,
  };
}

function check(payload: unknown, headers: Record<string, string> = {}, verified: Verified = FIXED, nowMs = NOW) {
  return botDeliveryCheck(MAX_AGE)(payload, { request: { headers }, verified, nowMs });
}

describe('the checks of a verified bot update', () => {
  it('give its id, its kind (the one member of `event`), that member as data, the whole update and its bot', () => {
    const payload = update();
    expect(check(payload)).toEqual({
      id: ID,
      kind: 'messageCreate',
      payload,
      update: payload,
      data: (payload.event as Record<string, unknown>).messageCreate,
      verifiedBy: undefined,
      botId: 'bot-1',
    });
  });

  it('give its id in canonical form, matched against X-Svc-Delivery in that form', () => {
    expect(check(update({ id: ID.toUpperCase() }), { 'x-svc-delivery': ID.toUpperCase() }).id).toBe(ID);
  });

  it('refuse an X-Svc-Delivery that names another delivery', () => {
    expect(refusal(() => check(update(), { 'x-svc-delivery': 'other' }))).toBe('delivery_id_mismatch');
  });

  describe('bind the update to the bot whose secret verified it', () => {
    it('name the bot the path named when a lookup verified it', () => {
      expect(check(update({ botUserId: BOT }), {}, { by: BOT })).toMatchObject({ verifiedBy: BOT, botId: BOT });
      // A UUID is one bot however its letters are cased.
      expect(check(update({ botUserId: BOT }), {}, { by: BOT.toUpperCase() }).botId).toBe(BOT.toUpperCase());
    });

    it("refuse an update for another bot than the path's: one bot's secret holder cannot speak for another", () => {
      expect(refusal(() => check(update({ botUserId: 'b-other' }), {}, { by: BOT }))).toBe('bot_id_mismatch');
      expect(refusal(() => check(update({ botUserId: undefined }), {}, { by: BOT }))).toBe('bot_id_mismatch');
    });

    it('with a fixed secret, name the signed botUserId (empty when there is none)', () => {
      expect(check(update({ botUserId: 'b-9' })).botId).toBe('b-9');
      expect(check(update({ botUserId: 7 })).botId).toBe('');
    });

    it('check a command only against the bot it names: one naming no bot as text is delivered', () => {
      const commanded = (command: Record<string, unknown>) =>
        update({ botUserId: BOT, event: { messageCreate: { workspaceId: 'w', message: { id: 'm1', text: '/deploy', command } } } });
      expect(check(commanded({ name: 'deploy' }), {}, { by: BOT }).botId).toBe(BOT);
      expect(check(commanded({ name: 'deploy', botUserId: 7 }), {}, { by: BOT }).botId).toBe(BOT);
      expect(check(commanded({ name: 'deploy', botUserId: BOT.toUpperCase() }), {}, { by: BOT }).botId).toBe(BOT);
      expect(refusal(() => check(commanded({ name: 'deploy', botUserId: 'b-other' }), {}, { by: BOT }))).toBe('bot_id_mismatch');
    });
  });

  it.each([
    ['an array', [update()]],
    ['a string', 'update'],
    ['null', null],
    ['without `id`', update({ id: undefined })],
    ['with a numeric `id`', update({ id: 42 })],
    ['with an empty `id` (every such update would share one de-dup key)', update({ id: '' })],
    ['without `event`', update({ event: undefined })],
    ['whose `event` is an array', update({ event: [{ workspaceId: 'w' }] })],
    ['whose `event` is null', update({ event: null })],
    ['whose `event` has no member', update({ event: {} })],
    ['whose `event` has two members (its kind is ambiguous)', update({ event: { messageCreate: { workspaceId: 'w' }, taskCreate: { workspaceId: 'w' } } })],
    ['whose `event` member is not an object', update({ event: { messageCreate: 'text' } })],
    ['whose `event` member is null', update({ event: { messageCreate: null } })],
    ['whose `createdAt` is not a date (the replay-age check cannot be skipped)', update({ createdAt: 'yesterday' })],
    ['whose `createdAt` is missing', update({ createdAt: undefined })],
    ['whose `createdAt` is a number', update({ createdAt: NOW })],
    ['whose `createdAt` is a number that would read as a year', update({ createdAt: 2026 })],
  ])('refuse an update %s: 400 schema_violation', (_what, payload) => {
    expect(refusal(() => check(payload))).toBe('schema_violation');
  });

  it('refuse a schema violation with an empty list of problems', () => {
    try {
      check(update({ id: '' }));
    } catch (err) {
      expect((err as SvcWebhookError).details).toEqual([]);
      expect((err as SvcWebhookError).status).toBe(400);
    }
    expect.assertions(2);
  });

  it('accept an update exactly `maxAgeMs` old and refuse one a millisecond older as a possible replay', () => {
    const createdAt = new Date(NOW - MAX_AGE).toISOString();
    expect(check(update({ createdAt })).id).toBe(ID);
    expect(refusal(() => check(update({ createdAt }), {}, FIXED, NOW + 1))).toBe('delivery_expired');
  });

  it('accept an update ahead of this clock by the skew allowed (5 minutes), and refuse one further ahead: it would never grow old', () => {
    expect(BOT_UPDATE_FUTURE_MS).toBe(300_000);
    expect(check(update({ createdAt: new Date(NOW + BOT_UPDATE_FUTURE_MS).toISOString() })).id).toBe(ID);
    expect(refusal(() => check(update({ createdAt: new Date(NOW + BOT_UPDATE_FUTURE_MS + 1).toISOString() })))).toBe('timestamp_out_of_tolerance');
    expect(refusal(() => check(update({ createdAt: '9999-12-31T23:59:59.999Z' })))).toBe('timestamp_out_of_tolerance');
  });
});
