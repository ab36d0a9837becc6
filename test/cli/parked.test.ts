import { runCli } from './run-cli';

/** `svc-webhooks parked`: what it refuses before it reaches any store (the process test runs it against Redis and PostgreSQL). */
describe('svc-webhooks parked', () => {
  it.each([
    [[], 'name a subcommand: list, show, replay or drop'],
    [['retry', 'x'], 'name a subcommand: list, show, replay or drop'],
    [['list', 'x'], 'list takes no delivery id'],
    [['show'], 'show needs a delivery id'],
    [['replay'], 'replay needs a delivery id or --all, not both'],
    [['drop', 'x', '--all'], 'drop needs a delivery id or --all, not both'],
    [['show', 'x', '--all'], '--all goes with replay or drop'],
    [['list', 'x', 'y'], 'unexpected argument'],
    [['drop', '--all', '--inbox'], "the inbox's dead letters are dropped one at a time"],
    [['list'], 'name the store: --redis-url (or REDIS_URL) or --postgres-url (or DATABASE_URL)'],
    [['list', '--redis-url', 'redis://127.0.0.1:1', '--postgres-url', 'postgres://127.0.0.1:1/x'], 'name the store'],
    [['list', '--postgres-url', 'postgres://127.0.0.1:1/x', '--prefix', 'p:'], "--prefix is the Redis store's"],
    [['list', '--redis-url', 'redis://127.0.0.1:1', '--table', 't'], "--table is the PostgreSQL store's"],
  ])('refuses %j with a usage error (exit 2): %s', async (args, message) => {
    const result = await runCli(['parked', ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('needs --url to replay, since the handlers run in the receiver', async () => {
    const result = await runCli(['parked', 'replay', 'x', '--redis-url', 'redis://127.0.0.1:1']);
    expect([result.code, result.stderr.includes('replay needs --url')]).toEqual([2, true]);
  });
});
