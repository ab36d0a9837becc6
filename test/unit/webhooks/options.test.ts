import { svcBoardWebhook, svcBotWebhook } from '../../../src';

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
    [{ maxBodyBytes: 1024 }, /maxBodyBytes/],
    [{ maxBodyBytes: '100kb' }, /maxBodyBytes/],
    [{ maxBodyBytes: 'lots' }, /maxBodyBytes/],
    [{ timeoutMs: 10_000 }, /timeoutMs/],
    [{ timeoutMs: 0 }, /timeoutMs/],
    [{ leaseMs: 100 }, /leaseMs/],
    [{ toleranceSeconds: -1 }, /toleranceSeconds/],
    [{ path: 'webhooks' }, /path/],
    [{ schemaPolicy: 'lenient' }, /schemaPolicy/],
    [{ tolerence: 60 }, /no option `tolerence`; did you mean `toleranceSeconds`\?/],
    [{ timeout: 5000 }, /no option `timeout`: it was renamed `timeoutMs`/],
  ])('throws for %j', (options, message) => {
    expect(() => svcBoardWebhook({ secret: SECRET, ...(options as object) })).toThrow(message);
  });

  it('refuses `toleranceSeconds` for the bot webhook, which has no timestamp', () => {
    expect(() => svcBotWebhook({ secret: SECRET, toleranceSeconds: 60 } as never)).toThrow(/svcBotWebhook has no option `toleranceSeconds`/);
  });

  it('accepts the limit as bytes or with a unit, at least 256 KB', () => {
    expect(() => svcBoardWebhook({ secret: SECRET, maxBodyBytes: '256kb' })).not.toThrow();
    expect(() => svcBoardWebhook({ secret: SECRET, maxBodyBytes: 1024 * 1024 })).not.toThrow();
    expect(() => svcBoardWebhook({ secret: SECRET, maxBodyBytes: '1mb' })).not.toThrow();
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
