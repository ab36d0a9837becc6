import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SvcClient } from '../../src/client';
import { startReceiver, BOARD_SECRET } from '../emulator/receiver';
import { freePort, waitUntil, canConnect } from '../support/net';
import { runCli } from './run-cli';

/** A token file `emulate` writes once it listens, read when complete. */
async function tokenIn(path: string): Promise<string> {
  const complete = async () => {
    try {
      return readFileSync(path, 'utf8').endsWith('\n');
    } catch {
      return false;
    }
  };
  await waitUntil(complete, 5_000, `${path} was not written`);
  return readFileSync(path, 'utf8').trim();
}

describe('svc-webhooks emulate', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'emulate-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs `emulate` until `use` has finished with its base URL. */
  async function emulate(args: string[], use: (baseUrl: string) => Promise<void>) {
    const port = await freePort();
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const running = runCli(['emulate', '--port', String(port), ...args], { cwd: dir, interrupted: () => stopped });
    let failure: unknown;
    try {
      await waitUntil(() => canConnect(port), 5_000, 'the emulator did not listen');
      if (args.includes('--bot-token-file')) await tokenIn(join(dir, 'bot.token'));
      await use(`http://127.0.0.1:${port}`);
    } catch (err) {
      failure = err;
    }
    stop();
    const result = await running;
    if (failure !== undefined) throw failure;
    return result;
  }

  it('should listen on loopback with the real clock, print its routes, write the tokens and print neither', async () => {
    const receiver = await startReceiver();
    try {
      const result = await emulate(['--allow-loopback', '--person-token-file', 'person.token', '--bot-token-file', 'bot.token'], async (baseUrl) => {
        const token = await tokenIn(join(dir, 'person.token'));
        const client = new SvcClient({ baseUrl, token });
        const boards = ((await (await fetch(`${baseUrl}/_emulator`)).json()) as { boards: Array<{ id: string }> }).boards;
        const boardId = boards[0]!.id;
        const put = await fetch(`${baseUrl}/api/boards/${boardId}/webhook`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: receiver.boardUrl, secret: BOARD_SECRET }),
        });
        expect(put.status).toBe(200);
        const emitted = await fetch(`${baseUrl}/_emulator/boards/${boardId}/events`, { method: 'POST', body: JSON.stringify({ type: 'task.created' }) });
        expect(emitted.status).toBe(201);
        await waitUntil(async () => receiver.board.length === 1, 5_000, 'the event was not delivered on the real clock');
        expect(await client.getBoardWebhook(boardId)).toMatchObject({ enabled: true, pending: 0 });
      });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^svc emulator listening on http:\/\/127\.0\.0\.1:\d+ \(real clock\)$/m);
      expect(result.stdout).toContain('POST /_emulator/boards/{id}/events');
      expect(result.stdout).toContain('/api/boards/{id}/webhook/ping');
      expect(result.stdout).toContain('person: in person.token');
      const person = readFileSync(join(dir, 'person.token'), 'utf8').trim();
      const bot = readFileSync(join(dir, 'bot.token'), 'utf8').trim();
      expect(bot).toMatch(/^svc_bot_[0-9a-f-]{36}_[A-Za-z0-9_-]{43}$/);
      expect(statSync(join(dir, 'bot.token')).mode & 0o777).toBe(0o600);
      expect(result.stdout + result.stderr).not.toContain(person);
      expect(result.stdout + result.stderr).not.toContain(bot.slice(-43));
      expect(result.stdout).toMatch(/svc emulator stopped\n$/);
    } finally {
      await receiver.close();
    }
  });

  it('should refuse loopback webhook urls unless told otherwise', async () => {
    await emulate(['--person-token-file', 'person.token'], async (baseUrl) => {
      const token = await tokenIn(join(dir, 'person.token'));
      const boards = ((await (await fetch(`${baseUrl}/_emulator`)).json()) as { boards: Array<{ id: string }> }).boards;
      const put = await fetch(`${baseUrl}/api/boards/${boards[0]!.id}/webhook`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', secret: BOARD_SECRET }),
      });
      expect(put.status).toBe(400);
    });
  });

  it('should move a manual clock only through the control route', async () => {
    await emulate(['--clock', 'manual'], async (baseUrl) => {
      const before = ((await (await fetch(`${baseUrl}/_emulator`)).json()) as { now: string }).now;
      const advanced = await fetch(`${baseUrl}/_emulator/advance`, { method: 'POST', body: JSON.stringify({ ms: 3_600_000 }) });
      expect(advanced.status).toBe(200);
      expect(Date.parse(((await advanced.json()) as { now: string }).now) - Date.parse(before)).toBe(3_600_000);
    });
  });

  it.each([
    [['--port', 'eighty'], '--port'],
    [['--clock', 'fast'], '--clock'],
    [['--forward', 'nothing'], '--forward'],
    [['--forward', 'https://a.example=ftp://b'], 'forward'],
    [['extra'], 'no arguments'],
  ])('should exit 2 for %j', async (args, named) => {
    const result = await runCli(['emulate', ...args], { cwd: dir, interrupted: () => new Promise(() => undefined) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(named);
  });
});
