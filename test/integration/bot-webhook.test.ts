import express5 from 'express';
import { memoryStore, svcBotWebhook, type BotWebhookMiddleware, type BotWebhookOptions } from '../../src';
import { appWith, expressVersions, silentLogger } from '../support/apps';
import { post } from '../support/post';
import { BOT_SECRET, fixture, signBot } from '../support/sign';

const PATH = '/webhooks/bot';

describe.each(expressVersions)('bot webhook in %s', (_name, expressLib) => {
  function setup(options: Partial<BotWebhookOptions> = {}): { bot: BotWebhookMiddleware; app: express5.Express } {
    const bot = svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger, ...options });
    return { bot, app: appWith(expressLib, bot) };
  }

  describe('a valid update', () => {
    it('runs the handlers of its kind with the member of `event` named after it', async () => {
      const { bot, app } = setup();
      const onMessage = jest.fn();
      const onTask = jest.fn();
      bot.on('messageCreate', onMessage).on('taskUpdate', onTask);
      const update = fixture('bot', 'messageCreate');

      const res = await post(app, PATH, signBot(update));

      expect(res.status).toBe(200);
      expect(onTask).not.toHaveBeenCalled();
      expect(onMessage).toHaveBeenCalledTimes(1);
      const [data, ctx] = onMessage.mock.calls[0];
      expect(data).toEqual(update.event.messageCreate);
      expect(ctx).toMatchObject({ webhook: 'bot', kind: 'messageCreate', deliveryId: update.id, update });
    });

    it('runs .command(name) handlers with the messageCreate data when message.command.name matches', async () => {
      const { bot, app } = setup();
      const deploy = jest.fn();
      const rollback = jest.fn();
      const anyMessage = jest.fn();
      bot.command('deploy', deploy).command('rollback', rollback).on('messageCreate', anyMessage);
      const update = fixture('bot', 'messageCreate.command');

      await post(app, PATH, signBot(update)).expect(200);

      expect(deploy).toHaveBeenCalledTimes(1);
      expect(deploy.mock.calls[0][0].message.command).toEqual({ botUserId: update.botUserId, name: 'deploy', args: 'production --force' });
      expect(rollback).not.toHaveBeenCalled();
      expect(anyMessage).toHaveBeenCalledTimes(1);
    });

    it('401 bot_id_mismatch for a command addressed to another bot than the update is for; no handler runs', async () => {
      const { bot, app } = setup();
      const deploy = jest.fn();
      bot.command('deploy', deploy).onAny(deploy);
      const update = fixture('bot', 'messageCreate.command');
      update.event.messageCreate.message.command.botUserId = '0b7e6a52-3f0e-4c8e-9d51-2f8a1c3b4d5e';
      const res = await post(app, PATH, signBot(update));
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('bot_id_mismatch');
      expect(deploy).not.toHaveBeenCalled();
    });

    it('accepts `command: null` on an ordinary message, and runs no command handler', async () => {
      const { bot, app } = setup();
      const deploy = jest.fn();
      const message = jest.fn();
      bot.command('deploy', deploy).on('messageCreate', message);
      const update = fixture('bot', 'messageCreate');
      update.event.messageCreate.message.command = null;
      await post(app, PATH, signBot(update)).expect(200);
      expect(message).toHaveBeenCalledTimes(1);
      expect(deploy).not.toHaveBeenCalled();
    });

    it('runs no command handler for a message without a command', async () => {
      const { bot, app } = setup();
      const deploy = jest.fn();
      bot.command('deploy', deploy);
      await post(app, PATH, signBot(fixture('bot', 'messageCreate'))).expect(200);
      expect(deploy).not.toHaveBeenCalled();
    });
  });

  it('an unknown event kind is answered 200 and reaches only onAny', async () => {
    const { bot, app } = setup();
    const any = jest.fn();
    const message = jest.fn();
    bot.on('messageCreate', message).onAny(any);
    const update = fixture('bot', 'messageCreate', { event: { pollVote: { workspaceId: 'w', option: 2 } } });
    await post(app, PATH, signBot(update)).expect(200);
    expect(any).toHaveBeenCalledTimes(1);
    expect(any.mock.calls[0][1].kind).toBe('pollVote');
    expect(message).not.toHaveBeenCalled();
  });

  it('a duplicate of a handled update is answered 200 without running handlers again', async () => {
    const { bot, app } = setup();
    const handler = jest.fn();
    bot.on('botCallback', handler);
    const update = fixture('bot', 'botCallback');
    await post(app, PATH, signBot(update)).expect(200);
    await post(app, PATH, signBot(update)).expect(200, { ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  describe('the signature', () => {
    it.each([
      ['missing', undefined, 'signature_missing'],
      ['the board scheme', (hex: string) => `v1=${hex}`, 'signature_malformed'],
      ['upper-case scheme name', (hex: string) => `SHA256=${hex}`, 'signature_malformed'],
      ['short', (hex: string) => `sha256=${hex.slice(2)}`, 'signature_malformed'],
      ['wrong', (hex: string) => `sha256=${hex.replace(/^./, (c) => (c === '0' ? '1' : '0'))}`, 'signature_mismatch'],
    ])('401 when %s', async (_what, make, code) => {
      const { bot, app } = setup();
      const handler = jest.fn();
      bot.onAny(handler);
      const signed = signBot(fixture('bot', 'messageCreate'));
      const hex = signed.headers['X-Svc-Signature']!.slice('sha256='.length);
      if (make === undefined) delete signed.headers['X-Svc-Signature'];
      else signed.headers['X-Svc-Signature'] = make(hex);
      const res = await post(app, PATH, signed);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe(code);
      expect(handler).not.toHaveBeenCalled();
    });

    it('accepts upper-case hex digits', async () => {
      const { app } = setup();
      const signed = signBot(fixture('bot', 'messageCreate'));
      signed.headers['X-Svc-Signature'] = `sha256=${signed.headers['X-Svc-Signature']!.slice('sha256='.length).toUpperCase()}`;
      await post(app, PATH, signed).expect(200);
    });
  });

  describe('replay protection', () => {
    it('401 delivery_expired for an update created before the de-dup window, even when correctly signed', async () => {
      const { bot, app } = setup();
      const handler = jest.fn();
      bot.onAny(handler);
      const update = fixture('bot', 'messageCreate', { createdAt: new Date(Date.now() - 26 * 3600 * 1000).toISOString() });
      const res = await post(app, PATH, signBot(update));
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('delivery_expired');
      expect(handler).not.toHaveBeenCalled();
    });

    it('refuses updates older than a store remembers ids, when its retention is shorter than the window', async () => {
      const { app } = setup({ store: memoryStore({ retentionMs: 3600_000 }) });
      const update = fixture('bot', 'messageCreate', { createdAt: new Date(Date.now() - 2 * 3600_000).toISOString() });
      const res = await post(app, PATH, signBot(update));
      expect(res.body.code).toBe('delivery_expired');
    });

    it('accepts an update a day old, the last of the sender’s retries', async () => {
      const { app } = setup();
      const update = fixture('bot', 'messageCreate', { createdAt: new Date(Date.now() - 24 * 3600 * 1000).toISOString() });
      await post(app, PATH, signBot(update)).expect(200);
    });
  });

  describe('a body that is not a usable update', () => {
    it.each([
      ['two members in event', { event: { messageCreate: { workspaceId: 'w', message: {} }, taskUpdate: {} } }],
      ['no member in event', { event: {} }],
      ['event data that is not an object', { event: { taskUpdate: 'x' } }],
      ['createdAt that is not a timestamp', { createdAt: 'yesterday' }],
    ])('400 schema_violation for %s', async (_what, overrides) => {
      const { bot, app } = setup();
      const handler = jest.fn();
      bot.onAny(handler);
      const res = await post(app, PATH, signBot(fixture('bot', 'messageCreate', overrides)));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('schema_violation');
      expect(handler).not.toHaveBeenCalled();
    });

    it('400 delivery_id_mismatch when X-Svc-Delivery differs from the body id', async () => {
      const { app } = setup();
      const res = await post(app, PATH, signBot(fixture('bot', 'messageCreate')), { 'X-Svc-Delivery': 'another-id' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('delivery_id_mismatch');
    });
  });
});
