import pino from 'pino';
import { svcBoardWebhook, svcBotWebhook } from '../../../src';
import type { BoardDelivery } from '../../../src/internal/delivery/delivery';
import { HandlerRegistry, boardRoute } from '../../../src/route/delivery-route';
import type { BoardContext } from '../../../src/route/handler-types';
import { IGNORE_OPTIONS, ignoreRule, ignoreSettings, ignoredBy, originOf, type IgnoreSettings } from '../../../src/route/origin';
import { boardEvent } from '../../../src/testing/example-events';
import { boardDelivery } from '../../../src/validate/board-delivery';
import { checkIgnore } from '../../../src/webhooks/webhook-options';
import { settings } from '../../../src/webhooks/webhook-settings';

const BOT_ID = '5d3c9a52-7f0e-4b8a-9c1d-2e6f8a9b0c1d';
const OTHER_BOT = '0b1c2d3e-4f50-4617-8829-3a4b5c6d7e8f';
const PERSON = '7b3ab64a-91a7-4fe9-8a0a-4fd1854ae1d3';
const SECRET_PART = 'Zq8_rT3-kLm9NpQ2sUvWxY0aBcDeFgHiJkLmNoPqRsT';
const TOKEN = `svc_bot_${BOT_ID}_${SECRET_PART}`;
const BOARD_SECRET = 'origin-test-secret-0123456789abcdef';

const person = { id: PERSON, is_bot: false, name: 'Jonas Weber' };
const self = { id: BOT_ID, is_bot: true, name: 'Sync bot' };
const otherBot = { id: OTHER_BOT, is_bot: true, name: 'Another bot' };
const rule = { id: 'r-1', name: 'Close when merged' };

const NONE: IgnoreSettings = { self: undefined, bots: false, rules: false };

describe('originOf', () => {
  it('is person for an actor whose is_bot is false', () => {
    expect(originOf({ actor: person, rule: null })).toBe('person');
  });

  it('is bot for an actor whose is_bot is true', () => {
    expect(originOf({ actor: self, rule: null })).toBe('bot');
  });

  it('reads is_bot as the spec spells it: an isBot field, or a truthy non-boolean, makes no bot', () => {
    expect(originOf({ actor: { id: OTHER_BOT, isBot: true, name: 'x' }, rule: null })).toBe('person');
    expect(originOf({ actor: { id: OTHER_BOT, is_bot: 'true', name: 'x' }, rule: null })).toBe('person');
  });

  it('is rule when an automation rule made the change (actor null, rule set)', () => {
    expect(originOf({ actor: null, rule })).toBe('rule');
  });

  it('is rule whenever rule is set, even beside an actor', () => {
    expect(originOf({ actor: person, rule })).toBe('rule');
  });

  it('is server for actor null without a rule: auto-archive, Git events, ping', () => {
    expect(originOf({ actor: null, rule: null })).toBe('server');
  });

  it('is server for a body without the fields (let through by schemaPolicy), or no object at all', () => {
    expect(originOf({})).toBe('server');
    expect(originOf({ actor: 'someone', rule: 'a rule' })).toBe('server');
    expect(originOf({ actor: [person], rule: [rule] })).toBe('server');
    expect(originOf(null)).toBe('server');
    expect(originOf('task.updated')).toBe('server');
  });
});

describe('ignoredBy', () => {
  const withSelf: IgnoreSettings = { ...NONE, self: BOT_ID };

  it('is self for an event whose actor is the bot of ignore.self', () => {
    expect(ignoredBy(withSelf, { actor: self, rule: null })).toBe('self');
  });

  it('compares the actor id without regard to case', () => {
    expect(ignoredBy(withSelf, { actor: { ...self, id: BOT_ID.toUpperCase() }, rule: null })).toBe('self');
  });

  it('keeps events of people, other bots, rules and the server when only self is set', () => {
    expect(ignoredBy(withSelf, { actor: person, rule: null })).toBeUndefined();
    expect(ignoredBy(withSelf, { actor: otherBot, rule: null })).toBeUndefined();
    expect(ignoredBy(withSelf, { actor: null, rule })).toBeUndefined();
    expect(ignoredBy(withSelf, { actor: null, rule: null })).toBeUndefined();
  });

  it('does not take an actor without a string id, or a body that is no object, for the bot', () => {
    expect(ignoredBy(withSelf, { actor: { is_bot: true }, rule: null })).toBeUndefined();
    expect(ignoredBy(withSelf, { actor: { id: 42, is_bot: true }, rule: null })).toBeUndefined();
    expect(ignoredBy(withSelf, null)).toBeUndefined();
  });

  it('is bot for any bot with bots: true, and self still wins for the own bot', () => {
    const bots: IgnoreSettings = { ...NONE, bots: true };
    expect(ignoredBy(bots, { actor: otherBot, rule: null })).toBe('bot');
    expect(ignoredBy(bots, { actor: self, rule: null })).toBe('bot');
    expect(ignoredBy({ ...bots, self: BOT_ID }, { actor: self, rule: null })).toBe('self');
    expect(ignoredBy(bots, { actor: person, rule: null })).toBeUndefined();
    expect(ignoredBy(bots, { actor: null, rule })).toBeUndefined();
  });

  it('is rule for a rule change with rules: true, and nothing else', () => {
    const rules: IgnoreSettings = { ...NONE, rules: true };
    expect(ignoredBy(rules, { actor: null, rule })).toBe('rule');
    expect(ignoredBy(rules, { actor: null, rule: null })).toBeUndefined();
    expect(ignoredBy(rules, { actor: otherBot, rule: null })).toBeUndefined();
    expect(ignoredBy(rules, { actor: person, rule: null })).toBeUndefined();
  });

  it('ignores nothing with every part off', () => {
    for (const event of [
      { actor: self, rule: null },
      { actor: otherBot, rule: null },
      { actor: null, rule },
    ])
      expect(ignoredBy(NONE, event)).toBeUndefined();
  });
});

describe('ignoreRule', () => {
  const delivery = (event: object) => ({ id: 'd', kind: 'task.updated', payload: event });

  it('is undefined when nothing is ignored, so that the receiver pays nothing', () => {
    expect(ignoreRule(undefined)).toBeUndefined();
    expect(ignoreRule(NONE)).toBeUndefined();
  });

  it('checks the payload of a delivery with any part set', () => {
    expect(ignoreRule({ ...NONE, self: BOT_ID })!(delivery({ actor: self, rule: null }))).toBe('self');
    expect(ignoreRule({ ...NONE, bots: true })!(delivery({ actor: otherBot, rule: null }))).toBe('bot');
    expect(ignoreRule({ ...NONE, rules: true })!(delivery({ actor: null, rule }))).toBe('rule');
    expect(ignoreRule({ ...NONE, rules: true })!(delivery({ actor: person, rule: null }))).toBeUndefined();
  });
});

describe('the ignore option', () => {
  it('keeps the bot id of a bot token, never the token', () => {
    const read = ignoreSettings({ self: TOKEN }, 'svcBoardWebhook');
    expect(read).toEqual({ self: BOT_ID, bots: false, rules: false });
    expect(JSON.stringify(read)).not.toContain(SECRET_PART);
  });

  it('takes a bare bot user id, in either case', () => {
    expect(ignoreSettings({ self: BOT_ID }, 'svcBoardWebhook').self).toBe(BOT_ID);
    expect(ignoreSettings({ self: BOT_ID.toUpperCase() }, 'svcBoardWebhook').self).toBe(BOT_ID);
  });

  it('reads bots and rules, false by default', () => {
    expect(ignoreSettings({}, 'svcBoardWebhook')).toEqual(NONE);
    expect(ignoreSettings({ bots: true, rules: true }, 'svcBoardWebhook')).toEqual({ self: undefined, bots: true, rules: true });
  });

  const refused = (value: unknown): Error => {
    try {
      ignoreSettings(value, 'svcBoardWebhook');
    } catch (err) {
      return err as Error;
    }
    throw new Error('not refused');
  };

  it.each([
    ['a token with one character too many', `${TOKEN}x`, 'exactly 43 characters'],
    ['a token with a trailing newline', `${TOKEN}\n`, 'whitespace'],
    ['a token with an upper-case bot id', `svc_bot_${BOT_ID.toUpperCase()}_${SECRET_PART}`, 'lowercase'],
    ['an OAuth access token', `svc_oa_${SECRET_PART}`, 'starts with svc_bot_'],
    ['a bot name', 'sync-bot', 'starts with svc_bot_'],
    ['a UUID with a trailing space', `${BOT_ID} `, 'starts with svc_bot_'],
  ])('refuses %s with a TypeError naming ignore.self, without quoting it', (_what, value, why) => {
    const err = refused({ self: value });
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain('`ignore.self`');
    expect(err.message).toContain(why);
    expect(err.message).toContain(`a string of ${value.length} characters`);
    expect(err.message).not.toContain(SECRET_PART);
    expect(err.message).not.toContain(value.trim());
  });

  it('refuses a self that is no string, and says what it got', () => {
    const err = refused({ self: 42 });
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toMatch(/`ignore\.self`.*number 42/);
  });

  it('refuses bots and rules that are not booleans, naming them', () => {
    expect(refused({ bots: 'yes' }).message).toContain('`ignore.bots`');
    expect(refused({ rules: 1 }).message).toContain('`ignore.rules`');
  });

  it('refuses an unknown name inside ignore with the closest one', () => {
    const err = refused({ bot: true });
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain('`ignore.bot`');
    expect(err.message).toContain('did you mean `ignore.bots`?');
  });

  it('is declared once, with a line of documentation each', () => {
    expect(Object.keys(IGNORE_OPTIONS)).toEqual(['self', 'bots', 'rules']);
    expect(IGNORE_OPTIONS.self.read(undefined, 'ignore.self')).toBeUndefined();
  });
});

describe('svcBoardWebhook with ignore', () => {
  it('throws at setup for a malformed token, naming ignore.self and never the token', () => {
    const bad = `${TOKEN.slice(0, -1)}!`;
    let error: Error | undefined;
    try {
      svcBoardWebhook({ secret: BOARD_SECRET, logger: false, ignore: { self: bad } });
    } catch (err) {
      error = err as Error;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect(error!.message).toContain('`ignore.self`');
    expect(error!.message).not.toContain(SECRET_PART.slice(0, 20));
  });

  it('throws at setup when ignore is no object', () => {
    expect(() => svcBoardWebhook({ secret: BOARD_SECRET, logger: false, ignore: true as never })).toThrow(
      /svcBoardWebhook `ignore` must be an object; got boolean true/,
    );
  });

  it('is a board option only: the bot webhook refuses it', () => {
    expect(() => svcBotWebhook({ secret: BOARD_SECRET, logger: false, ignore: { self: TOKEN } } as never)).toThrow(/svcBotWebhook has no option `ignore`/);
  });
});

describe('the webhook settings', () => {
  const read = (more: Record<string, unknown>) => settings({ secret: BOARD_SECRET, logger: false, ...more }, 'board');

  it('have no ignore check without the option, or with every part off', () => {
    expect(read({}).ignore).toBeUndefined();
    expect(read({ ignore: {} }).ignore).toBeUndefined();
    expect(read({ ignore: { bots: false, rules: false } }).ignore).toBeUndefined();
  });

  it('check deliveries with the option', () => {
    const ignore = read({ ignore: { self: TOKEN } }).ignore!;
    expect(ignore({ id: 'd', kind: 'task.updated', payload: { actor: self, rule: null } })).toBe('self');
  });

  it('refuse ignore beside inbox board order, and take it beside an unordered inbox', () => {
    const inbox = { connection: 'redis://127.0.0.1:6379' };
    expect(() => read({ ignore: { rules: true }, inbox: { ...inbox, ordered: true } })).toThrow(/`ignore` cannot be combined with `inbox.ordered`/);
    expect(read({ ignore: { rules: true }, inbox }).ignore).toBeDefined();
    expect(read({ ignore: {}, inbox: { ...inbox, ordered: true } }).ignore).toBeUndefined();
  });

  it('of the bot webhook never ignore', () => {
    expect(settings({ secret: BOARD_SECRET, logger: false }, 'bot').ignore).toBeUndefined();
  });
});

describe('checkIgnore', () => {
  const rule = () => undefined;
  const inbox = (ordered: boolean | ReadonlySet<string>) => ({ ordered }) as never;

  it('refuses ignore together with board order, for every type or some', () => {
    expect(() => checkIgnore({ ignore: rule, inbox: inbox(true) })).toThrow(TypeError);
    expect(() => checkIgnore({ ignore: rule, inbox: inbox(new Set(['task.updated'])) })).toThrow(/`ignore` cannot be combined with `inbox.ordered`/);
  });

  it('takes ignore with an inbox without order, or an empty list of ordered types', () => {
    expect(() => checkIgnore({ ignore: rule, inbox: inbox(false) })).not.toThrow();
    expect(() => checkIgnore({ ignore: rule, inbox: inbox(new Set()) })).not.toThrow();
    expect(() => checkIgnore({ ignore: rule, inbox: undefined })).not.toThrow();
  });

  it('takes board order when nothing is ignored', () => {
    expect(() => checkIgnore({ ignore: undefined, inbox: inbox(true) })).not.toThrow();
  });
});

describe('ctx.origin', () => {
  const NOW = 1_772_366_400_000;
  const contextOf = (overrides: Record<string, unknown>): BoardContext => {
    const route = boardRoute({ byType: new HandlerRegistry(), any: [] });
    const delivery: BoardDelivery = boardDelivery(boardEvent('task.updated', overrides as never), {
      request: { headers: {} },
      verified: { by: undefined, timestamp: NOW / 1000 },
      nowMs: NOW,
    });
    return route.context(delivery, {
      deliveryId: delivery.id,
      kind: delivery.kind,
      receivedAt: NOW,
      logger: pino({ level: 'silent' }),
    }) as unknown as BoardContext;
  };

  it("is the board context's origin of its event", () => {
    expect(contextOf({ actor: person, rule: null }).origin).toBe('person');
    expect(contextOf({ actor: otherBot, rule: null }).origin).toBe('bot');
    expect(contextOf({ actor: null, rule }).origin).toBe('rule');
    expect(contextOf({ actor: null, rule: null }).origin).toBe('server');
  });
});
