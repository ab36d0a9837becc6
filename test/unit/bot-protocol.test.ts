import pino from 'pino';
import { SvcWebhookError, type ErrorCode } from '../../src/errors';
import { pathPattern } from '../../src/internal/path-pattern';
import { botProtocol, type BotDelivery, type BotHandlers } from '../../src/receive/bot-protocol';
import type { RequestFacts } from '../../src/internal/request-access';
import { DeliveryScope } from '../../src/route/delivery-scope';
import { HandlerRegistry } from '../../src/route/handler-registry';
import type { BotHandler, CommandData } from '../../src/route/handler-types';
import { botSignature } from '../../src/testing/sign-delivery';
import { secretKeys } from '../../src/verify/secret-keys';
import type { SecretLookup } from '../../src/verify/secret-resolver';

const secret = 'bot-protocol-secret-0123456789';
const otherSecret = 'another-bot-secret-0123456789';
const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const MAX_AGE = 60_000;
const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const FIXED = pathPattern('/webhooks/bot', ['botId']);
const PER_BOT = pathPattern('/webhooks/bots/:botId', ['botId']);

function handlers(): BotHandlers {
  return { byKind: new HandlerRegistry<BotHandler<never>>(), byCommand: new HandlerRegistry<BotHandler<CommandData>>(), any: [] };
}

function fixed(h = handlers(), maxAge = MAX_AGE) {
  return botProtocol({ keys: secretKeys(secret) }, FIXED, h, maxAge);
}

/** A scripted lookup: each bot's keys, synchronously (cached) or as a promise (asked). */
function lookupOf(answer: (id: string) => ReturnType<SecretLookup['keysFor']>, secrets: readonly string[] = [secret]) {
  const keysFor = jest.fn(answer);
  const secretsOf = jest.fn((_id: string) => secrets);
  return { lookup: { keysFor, secretsOf } as unknown as SecretLookup, keysFor, secretsOf };
}

function update(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: ID, botUserId: 'bot-1', createdAt: new Date(NOW - 1000).toISOString(), event: { messageCreate: { workspaceId: 'w', message: { id: 'm1', text: 'hi' } } }, ...overrides };
}

function req(headers: Record<string, string> = {}, url = '/webhooks/bot'): RequestFacts {
  return { headers, url };
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

function claimOf(body: Buffer, key = secret): Buffer {
  return Buffer.from(botSignature(key, body.toString()).slice('sha256='.length), 'hex');
}

describe('the bot protocol', () => {
  it('is the bot webhook, checked against the bot schema', () => {
    expect([fixed().webhook, fixed().schema]).toEqual(['bot', 'bot']);
  });

  describe('reads the signature', () => {
    it('from X-Svc-Signature, as the MAC bytes', () => {
      const body = Buffer.from('{}');
      const signature = fixed().readSignature(req({ 'x-svc-signature': botSignature(secret, '{}') }), NOW);
      expect(signature.equals(claimOf(body))).toBe(true);
    });

    it('refuses a request without one', () => {
      expect(refusal(() => fixed().readSignature(req(), NOW))).toBe('signature_missing');
    });
  });

  describe('verifies with one fixed secret', () => {
    const body = Buffer.from('{"id":"x"}');

    it('synchronously, when the body carries its MAC', () => {
      expect(fixed().verify(claimOf(body), body, req())).toBeUndefined();
    });

    it('refusing a body signed with another secret', () => {
      expect(refusal(() => fixed().verify(claimOf(body, otherSecret), body, req()))).toBe('signature_mismatch');
    });
  });

  describe('verifies with the secret of the bot the path names, through a lookup', () => {
    const body = Buffer.from('{"id":"x"}');

    it('asks the lookup for that bot, and answers synchronously when its keys are cached', () => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      const protocol = botProtocol({ lookup }, PER_BOT, handlers(), MAX_AGE);
      expect(protocol.verify(claimOf(body), body, req({}, '/webhooks/bots/b-7'))).toBeUndefined();
      expect(keysFor).toHaveBeenCalledWith('b-7');
      expect(refusal(() => protocol.verify(claimOf(body, otherSecret), body, req({}, '/webhooks/bots/b-7')))).toBe('signature_mismatch');
    });

    it('waits for keys the lookup is still asking for, and refuses a forged body after them', async () => {
      const { lookup } = lookupOf(() => Promise.resolve(secretKeys(secret)));
      const protocol = botProtocol({ lookup }, PER_BOT, handlers(), MAX_AGE);
      await expect(protocol.verify(claimOf(body), body, req({}, '/webhooks/bots/b-7'))).resolves.toBeUndefined();
      await expect(protocol.verify(claimOf(body, otherSecret), body, req({}, '/webhooks/bots/b-7'))).rejects.toMatchObject({ code: 'signature_mismatch' });
    });

    it('refuses a path that names no bot, without asking the lookup', () => {
      const { lookup, keysFor } = lookupOf(() => secretKeys(secret));
      const protocol = botProtocol({ lookup }, PER_BOT, handlers(), MAX_AGE);
      expect(refusal(() => protocol.verify(claimOf(body), body, req({}, '/elsewhere')))).toBe('unknown_bot');
      expect(keysFor).not.toHaveBeenCalled();
    });
  });

  describe('reads the delivery of a verified update', () => {
    it('with its id, its kind (the one member of `event`), that member as data and the whole update', () => {
      const payload = update();
      const delivery = fixed().delivery(payload, req(), Buffer.alloc(0), NOW);
      expect(delivery).toEqual({ id: ID, kind: 'messageCreate', payload, update: payload, data: (payload.event as Record<string, unknown>).messageCreate, verifiedBot: undefined });
    });

    it('with its id in canonical form, matched against X-Svc-Delivery in that form', () => {
      const delivery = fixed().delivery(update({ id: ID.toUpperCase() }), req({ 'x-svc-delivery': ID.toUpperCase() }), Buffer.alloc(0), NOW);
      expect(delivery.id).toBe(ID);
    });

    it('refuses an X-Svc-Delivery that names another delivery', () => {
      expect(refusal(() => fixed().delivery(update(), req({ 'x-svc-delivery': 'other' }), Buffer.alloc(0), NOW))).toBe('delivery_id_mismatch');
    });

    it('names the bot the path named when a lookup verified it; with a fixed secret none, whatever the path', () => {
      const { lookup } = lookupOf(() => secretKeys(secret));
      expect(botProtocol({ lookup }, PER_BOT, handlers(), MAX_AGE).delivery(update(), req({}, '/webhooks/bots/b-7'), Buffer.alloc(0), NOW).verifiedBot).toBe('b-7');
      expect(botProtocol({ keys: secretKeys(secret) }, PER_BOT, handlers(), MAX_AGE).delivery(update(), req({}, '/webhooks/bots/b-7'), Buffer.alloc(0), NOW).verifiedBot).toBeUndefined();
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
    ])('refuses an update %s: 400 schema_violation', (_what, payload) => {
      expect(refusal(() => fixed().delivery(payload, req(), Buffer.alloc(0), NOW))).toBe('schema_violation');
    });

    it('refuses a schema violation with an empty list of problems', () => {
      try {
        fixed().delivery(update({ id: '' }), req(), Buffer.alloc(0), NOW);
      } catch (err) {
        expect((err as SvcWebhookError).details).toEqual([]);
        expect((err as SvcWebhookError).status).toBe(400);
      }
      expect.assertions(2);
    });

    it('accepts an update exactly `maxAgeMs` old and refuses one a millisecond older as a possible replay', () => {
      const createdAt = new Date(NOW - MAX_AGE).toISOString();
      expect(fixed().delivery(update({ createdAt }), req(), Buffer.alloc(0), NOW).id).toBe(ID);
      expect(refusal(() => fixed().delivery(update({ createdAt }), req(), Buffer.alloc(0), NOW + 1))).toBe('delivery_expired');
    });

    it('accepts an update from the future (clocks differ; only age is a replay)', () => {
      expect(fixed().delivery(update({ createdAt: new Date(NOW + 3_600_000).toISOString() }), req(), Buffer.alloc(0), NOW).id).toBe(ID);
    });
  });

  describe('routes a delivery', () => {
    function deliveryOf(protocol: ReturnType<typeof fixed>, payload: Record<string, unknown>): BotDelivery {
      return protocol.delivery(payload, req(), Buffer.alloc(0), NOW);
    }
    function contextOf(protocol: ReturnType<typeof fixed>, delivery: BotDelivery, logger = pino({ level: 'silent' })): DeliveryScope {
      return protocol.context(delivery, [delivery.id, delivery.kind, undefined, undefined, NOW, logger]);
    }
    const command = (name: unknown) => ({ workspaceId: 'w', message: { id: 'm1', text: '/x', command: { botUserId: 'bot-1', name, args: '' } } });

    it('to the handlers of its kind, then its command handlers, then onAny, each with the data and the context', async () => {
      const h = handlers();
      const order: string[] = [];
      const seen: unknown[] = [];
      const record =
        (name: string) =>
        (data: unknown, ctx: unknown): void => {
          order.push(name);
          seen.push(data, ctx);
        };
      h.any.push(record('any'));
      h.byCommand.add('deploy', record('deploy'), () => undefined);
      h.byCommand.add('rollback', record('rollback'), () => undefined);
      h.byKind.add('messageCreate', record('kind'), () => undefined);
      h.byKind.add('taskCreate', record('other kind'), () => undefined);
      const protocol = fixed(h);
      const delivery = deliveryOf(protocol, update({ event: { messageCreate: command('deploy') } }));
      const ctx = contextOf(protocol, delivery);
      for (const call of protocol.calls(delivery, ctx)) await call();
      expect(order).toEqual(['kind', 'deploy', 'any']);
      expect(seen).toEqual([delivery.data, ctx, delivery.data, ctx, delivery.data, ctx]);
    });

    it('runs command handlers only for messageCreate, not for another kind with a command-shaped message', () => {
      const h = handlers();
      const deploy = jest.fn();
      h.byCommand.add('deploy', deploy, () => undefined);
      const protocol = fixed(h);
      const other = deliveryOf(protocol, update({ event: { messageUpdate: command('deploy') } }));
      expect(protocol.calls(other, contextOf(protocol, other))).toHaveLength(0);
    });

    it('runs no command handler for a message without a command, or whose command has no string name', () => {
      const h = handlers();
      h.byCommand.add('deploy', jest.fn(), () => undefined);
      const protocol = fixed(h);
      for (const data of [{ workspaceId: 'w', message: { id: 'm1', command: null } }, { workspaceId: 'w', message: 'text' }, { workspaceId: 'w' }, command(7)]) {
        const delivery = deliveryOf(protocol, update({ event: { messageCreate: data } }));
        expect(protocol.calls(delivery, contextOf(protocol, delivery))).toHaveLength(0);
      }
    });

    it('gives the handlers a bot context: webhook, kind, update, delivery id', () => {
      const protocol = fixed();
      const payload = update();
      const delivery = deliveryOf(protocol, payload);
      const ctx = contextOf(protocol, delivery);
      expect(ctx).toMatchObject({ webhook: 'bot', kind: 'messageCreate', update: payload, deliveryId: ID, receivedAt: NOW });
    });
  });

  describe("names the secrets of the bot that verified a delivery, dropped from the lines about it (secretsOf)", () => {
    const botSecret = 'the-secret-of-bot-b7-0123456789';

    it('with a lookup: the secrets of the bot the path named', () => {
      const { lookup, secretsOf } = lookupOf(() => secretKeys(botSecret), [botSecret]);
      const protocol = botProtocol({ lookup }, PER_BOT, handlers(), MAX_AGE);
      const delivery = protocol.delivery(update(), req({}, '/webhooks/bots/b-7'), Buffer.alloc(0), NOW);
      expect(protocol.secretsOf(delivery)).toEqual([botSecret]);
      expect(secretsOf).toHaveBeenCalledWith('b-7');
    });

    it('with a lookup and no verifying bot: none, and asks for none', () => {
      const { lookup, secretsOf } = lookupOf(() => secretKeys(botSecret), [botSecret]);
      const protocol = botProtocol({ lookup }, PER_BOT, handlers(), MAX_AGE);
      const delivery = { ...protocol.delivery(update(), req({}, '/webhooks/bots/b-7'), Buffer.alloc(0), NOW), verifiedBot: undefined };
      expect(protocol.secretsOf(delivery)).toEqual([]);
      expect(secretsOf).not.toHaveBeenCalled();
    });

    it('with a fixed secret: none (the webhook\'s own logger drops it)', () => {
      const protocol = fixed();
      expect(protocol.secretsOf({ ...protocol.delivery(update(), req(), Buffer.alloc(0), NOW), verifiedBot: 'b-7' })).toEqual([]);
    });
  });
});
