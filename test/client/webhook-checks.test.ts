import { checkWebhookSecret, checkWebhookUrl, isSvcClientError, webhookSecretProblem, webhookUrlProblem } from '../../src/client';
import { isLoopbackHost } from '../../src/client/webhook-url';

describe('webhookUrlProblem', () => {
  it.each([
    'https://hooks.example.com/webhooks/board',
    'https://hooks.example.com:8443/a?b=c',
    'https://93.184.216.34/hook',
    'https://[2606:4700::1111]/hook',
    'https://172.32.0.1/hook',
    'https://192.169.0.1/hook',
  ])('accepts %s', (url) => {
    expect(webhookUrlProblem(url)).toBeUndefined();
  });

  it.each([
    ['not a URL', 'hooks.example.com/x', 'not an absolute URL'],
    ['http', 'http://hooks.example.com/x', 'must use https://'],
    ['localhost', 'https://localhost/x', 'local or private-network name'],
    ['LOCALHOST with a dot', 'https://LOCALHOST./x', 'local or private-network name'],
    ['a .localhost name', 'https://api.localhost/x', 'local or private-network name'],
    ['a .local name', 'https://printer.local/x', 'local or private-network name'],
    ['a single-label name', 'https://intranet/x', 'single-label name'],
    ['10/8', 'https://10.0.0.1/x', 'private range 10.0.0.0/8'],
    ['172.16/12', 'https://172.31.255.255/x', 'private range 172.16.0.0/12'],
    ['192.168/16', 'https://192.168.0.1/x', 'private range 192.168.0.0/16'],
    ['127/8', 'https://127.0.0.53/x', 'loopback range 127.0.0.0/8'],
    ['127/8 written as a number', 'https://2130706433/x', 'loopback range'],
    ['127/8 written in hex', 'https://0x7f.1/x', 'loopback range'],
    ['169.254/16', 'https://169.254.169.254/x', 'link-local range'],
    ['0.0.0.0', 'https://0.0.0.0/x', '"this network"'],
    ['::1', 'https://[::1]/x', 'loopback address ::1'],
    ['fc00::/7', 'https://[fc00::1]/x', 'unique local range'],
    ['fd00::/8', 'https://[fdab:1::1]/x', 'unique local range'],
    ['fe80::/10', 'https://[fe80::1]/x', 'link-local range'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/x', 'loopback range'],
    ['IPv4-mapped private', 'https://[::ffff:10.1.1.1]/x', 'private range 10.0.0.0/8'],
  ])('refuses %s', (_case, url, problem) => {
    expect(webhookUrlProblem(url)).toContain(problem);
  });

  it('checkWebhookUrl throws invalid_url', () => {
    expect(() => checkWebhookUrl('http://x.example.com')).toThrow(expect.objectContaining({ code: 'invalid_url', status: undefined }));
    expect(checkWebhookUrl('https://x.example.com')).toBe('https://x.example.com');
  });
});

describe('webhookSecretProblem', () => {
  it.each([
    [15, false],
    [16, true],
    [256, true],
    [257, false],
  ])('a secret of %i characters is accepted: %s', (length, ok) => {
    expect(webhookSecretProblem('s'.repeat(length)) === undefined).toBe(ok);
  });

  it('refuses an svc token as the secret', () => {
    expect(webhookSecretProblem(`svc_bot_0b7e6a52-3f0e-4c8e-9d51-2f8a1c3b4d5e_${'a'.repeat(43)}`)).toContain('is an svc token');
  });

  it('checkWebhookSecret throws invalid_secret without quoting the secret', () => {
    try {
      checkWebhookSecret('hunter2');
      throw new Error('not thrown');
    } catch (err) {
      expect(isSvcClientError(err) && err.code).toBe('invalid_secret');
      expect((err as Error).message).not.toContain('hunter2');
    }
  });
});

describe('isLoopbackHost (where a token may go over plain http)', () => {
  const hostOf = (url: string) => new URL(url).hostname;

  it.each([
    'http://localhost',
    'http://LOCALHOST:3000',
    'http://127.0.0.1',
    'http://127.255.0.9',
    'http://0x7f.1',
    'http://[::1]',
    'http://[::ffff:127.0.0.1]',
  ])('counts %s as this machine', (url) => {
    expect(isLoopbackHost(hostOf(url))).toBe(true);
  });

  it.each([
    'http://svc.localhost',
    'http://localhost.',
    'http://localhost.localdomain',
    'http://ip6-localhost',
    'http://127.0.0.1.nip.io',
    'http://0.0.0.0',
    'http://10.0.0.1',
    'http://[::ffff:10.0.0.1]',
    'http://[::2]',
    'http://svc.example.com',
  ])('does not count %s, which is looked up in DNS or is another address', (url) => {
    expect(isLoopbackHost(hostOf(url))).toBe(false);
  });
});
