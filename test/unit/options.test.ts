import { svcBoardWebhook, svcBotWebhook } from '../../src';

const SECRET = 'a-secret-of-sixteen+';

describe('options are checked once, at setup', () => {
  it.each([
    ['an empty secret', ''],
    ['a secret shorter than 16 characters', 'short-secret'],
    ['a secret longer than 256 characters', 'x'.repeat(257)],
    ['an empty secret list', []],
    ['a list with a short secret', [SECRET, 'short']],
  ])('throws for %s, without quoting it', (_what, secret) => {
    expect(() => svcBoardWebhook(secret as string)).toThrow(/secret/);
    let thrown: unknown;
    try {
      svcBotWebhook({ secret: secret as string });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(Error);
    if (typeof secret === 'string' && secret.length > 0) expect((thrown as Error).message).not.toContain(secret);
  });

  it.each([
    [{ limit: 1024 }, /limit/],
    [{ limit: '100kb' }, /limit/],
    [{ limit: 'lots' }, /limit/],
    [{ timeout: 10_000 }, /timeout/],
    [{ timeout: 0 }, /timeout/],
    [{ lease: 100 }, /lease/],
    [{ tolerance: -1 }, /tolerance/],
    [{ path: 'webhooks' }, /path/],
    [{ schemaPolicy: 'lenient' }, /schemaPolicy/],
    [{ tolerence: 60 }, /unknown option `tolerence`/],
  ])('throws for %j', (options, message) => {
    expect(() => svcBoardWebhook({ secret: SECRET, ...(options as object) })).toThrow(message);
  });

  it('refuses `tolerance` for the bot webhook, which has no timestamp', () => {
    expect(() => svcBotWebhook({ secret: SECRET, tolerance: 60 } as never)).toThrow(/unknown option `tolerance`/);
  });

  it('accepts the limit as bytes or with a unit, at least 256 KB', () => {
    expect(() => svcBoardWebhook({ secret: SECRET, limit: '256kb' })).not.toThrow();
    expect(() => svcBoardWebhook({ secret: SECRET, limit: 1024 * 1024 })).not.toThrow();
    expect(() => svcBoardWebhook({ secret: SECRET, limit: '1mb' })).not.toThrow();
  });

  it('refuses handlers for types and kinds this version does not know, pointing to onAny', () => {
    expect(() => svcBoardWebhook(SECRET).on('task.creatd' as never, () => undefined)).toThrow(/onAny/);
    expect(() => svcBotWebhook(SECRET).on('messageCreated' as never, () => undefined)).toThrow(/onAny/);
    expect(() => svcBotWebhook(SECRET).command('', () => undefined)).toThrow(/command name/);
    expect(() => svcBoardWebhook(SECRET).onAny('nope' as never)).toThrow(/function/);
  });

  it('exposes the path it answers', () => {
    expect(svcBoardWebhook(SECRET).path).toBe('/webhooks/board');
    expect(svcBotWebhook({ secret: SECRET, path: '/hooks/bot/' }).path).toBe('/hooks/bot');
  });
});
