import { expectOneLine, runCli } from './run-cli';

describe('svc-webhooks inbox', () => {
  it.each([
    [[], 'a missing subcommand'],
    [['purge'], 'an unknown subcommand'],
    [['show'], 'show without an id'],
    [['drop'], 'drop without an id'],
    [['retry'], 'retry without an id or --all'],
    [['retry', 'abc', '--all'], 'retry with both an id and --all'],
    [['list', 'abc'], 'list with an id'],
    [['drop', 'abc', '--all'], '--all with drop'],
    [['show', 'a', 'b'], 'an extra argument'],
  ])('exits 2 with one line for %j (%s), before connecting anywhere', async (args) => {
    const result = await runCli(['inbox', ...args], { env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    expect(result.code).toBe(2);
    expectOneLine(result.stderr);
  });

  it('asks for the Redis URL when neither --redis-url nor REDIS_URL names it', async () => {
    const result = await runCli(['inbox', 'list']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--redis-url or REDIS_URL/);
  });

  it('refuses a URL that is not redis:// or rediss://', async () => {
    const result = await runCli(['inbox', 'list', '--redis-url', 'http://127.0.0.1:6379']);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr);
  });

  it('prints its help with --help', async () => {
    const result = await runCli(['inbox', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/retry <id \| --all>/);
  });
});
