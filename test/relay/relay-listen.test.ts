import { readFileSync, writeFileSync } from 'node:fs';
import { runCli } from '../cli/run-cli';
import {
  accepted,
  cli,
  createToken,
  end,
  endAll,
  portOf,
  receiver,
  RECEIVER_PORT,
  RELAY_PORT,
  sendBoardEvent,
  sendBot,
  signal,
  waitFor,
  workDir,
  type Proc,
  type Sent,
  listenProcess,
} from './relay-processes';

/**
 * What `listen` does besides forwarding, with real processes on 127.0.0.1 and one relay (a board
 * secret, and a map of bots, each its own secret): the filters, --json and the Ctrl-C summary,
 * replays, --raw, the bots' paths, a local receiver that is down, and the loopback-only target.
 */

const RELAY_SECRET = 'relay-board-secret-0123456789abcdef';
const BOT_1 = '3c1d6a4e-5b0f-4e43-9a53-6f3f3b0c1a01';
const BOT_2 = '3c1d6a4e-5b0f-4e43-9a53-6f3f3b0c1a02';
const BOT_SECRETS = { [BOT_1]: 'relay-bot-one-secret-0123456789ab', [BOT_2]: 'relay-bot-two-secret-0123456789ab' };
const DEV_SECRET = 'dev-secret-of-ivy-0123456789ab';
const BOARD_1 = '6f1b3c2d-0a4e-4b5f-8c6d-7e8f9a0b1c01';
const BOARD_2 = '6f1b3c2d-0a4e-4b5f-8c6d-7e8f9a0b1c02';
const SECRETS = [RELAY_SECRET, DEV_SECRET, ...Object.values(BOT_SECRETS)];

const work = workDir({ 'board-secret.txt': `${RELAY_SECRET}\n`, 'bot-secrets.json': JSON.stringify(BOT_SECRETS) });
const dataDir = work.path('data');
let relay: Proc;
let url: string;
let token: string;

function listener(name: string, port: number, extra: readonly string[] = []): Proc {
  const files = { tokenFile: work.path('ivy.token'), cursorFile: work.path(`${name}.cursor`) };
  return listenProcess({ relayUrl: url, port, ...files, env: { SVC_WEBHOOK_SECRET: DEV_SECRET }, extra });
}

const listening = (proc: Proc): Promise<true> => waitFor(`listener ${proc.pid} to connect (${proc.stderr})`, () => proc.stderr.includes('listening as'));
const ids = (proc: Proc): string[] => accepted(proc).map((r) => r.id);
const cursorOf = (name: string): number => (JSON.parse(readFileSync(work.path(`${name}.cursor`), 'utf8')) as { seq: number }).seq;
/** `listen --replay`, run as the CLI runs, with the token and the development secret in the environment. */
const replay = (ref: string, port: number, extra: readonly string[] = [], env: Record<string, string> = { SVC_WEBHOOK_SECRET: DEV_SECRET }) =>
  runCli(['listen', '--relay', url, '--to', `http://127.0.0.1:${port}`, '--replay', ref, ...extra], { env: { SVC_RELAY_TOKEN: token, ...env } });

beforeAll(async () => {
  token = await createToken('ivy', ['--data-dir', dataDir]);
  writeFileSync(work.path('ivy.token'), `${token}\n`);
  relay = cli([
    'relay',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--board-secret-file',
    work.path('board-secret.txt'),
    '--bot-secret-file',
    work.path('bot-secrets.json'),
  ]);
  url = `http://127.0.0.1:${await portOf(relay, RELAY_PORT)}`;
});

afterAll(async () => {
  await endAll();
  work.cleanup();
});

describe('filters, --json and the Ctrl-C summary', () => {
  let local: Proc;
  let filtered: Proc;
  const sent: Sent[] = [];

  beforeAll(async () => {
    local = receiver(DEV_SECRET);
    filtered = listener('filtered', await portOf(local, RECEIVER_PORT), ['--type', 'task.created', '--board', BOARD_1.toUpperCase(), '--json']);
    await listening(filtered);
  });

  test('only the matching deliveries are forwarded, one JSON object a line; the cursor moves past the others', async () => {
    sent.push(
      await sendBoardEvent(url, RELAY_SECRET, { boardId: BOARD_1 }),
      await sendBoardEvent(url, RELAY_SECRET, { boardId: BOARD_1, type: 'task.updated' }),
      await sendBot(url, BOT_SECRETS[BOT_1], BOT_1),
      await sendBoardEvent(url, RELAY_SECRET, { boardId: BOARD_1, title: 'second' }),
      await sendBoardEvent(url, RELAY_SECRET, { boardId: BOARD_2 }),
    );
    expect(sent.map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);
    await waitFor('the cursor past the last, a skipped one', () => cursorOf('filtered') === sent[4]!.seq);
    expect(ids(local)).toEqual([sent[0]!.id, sent[3]!.id]);
    const lines = filtered.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    const objects = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(objects.map((o) => o.deliveryId)).toEqual([sent[0]!.id, sent[3]!.id]);
    for (const [i, o] of objects.entries()) {
      expect(Object.keys(o).sort()).toEqual(['boardId', 'deliveryId', 'durationMs', 'mirrored', 'seq', 'status', 'time', 'type', 'webhook']);
      expect(o).toMatchObject({ seq: sent[i === 0 ? 0 : 3]!.seq, webhook: 'board', boardId: BOARD_1, type: 'task.created', status: 200, mirrored: false });
      expect(new Date(o.time as string).toISOString()).toBe(o.time);
      expect(typeof o.durationMs).toBe('number');
    }
  });

  test('Ctrl-C ends the listener with exit 0 and a summary that counts the skipped', async () => {
    signal(filtered, 'SIGINT');
    expect(await filtered.exited).toBe(0);
    const last = filtered.stdout.trim().split('\n').pop()!;
    expect(JSON.parse(last)).toEqual({ summary: { forwarded: 2, answered2xx: 2, answeredOther: 0, unanswered: 0, skipped: 3 } });
    for (const secret of [...SECRETS, token]) expect(filtered.stdout + filtered.stderr).not.toContain(secret);
  });

  test('--replay of a handled delivery id is answered as a duplicate; of a skipped one by its sequence, handled', async () => {
    const port = await portOf(local, RECEIVER_PORT);
    const again = await replay(sent[0]!.id, port);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`${sent[0]!.id} -> 200 in \\d+ ms\\n$`));
    const bySeq = await replay(String(sent[1]!.seq), port, ['--json']);
    expect(bySeq.code).toBe(0);
    expect(JSON.parse(bySeq.stdout)).toMatchObject({ seq: sent[1]!.seq, deliveryId: sent[1]!.id, type: 'task.updated', status: 200 });
    await waitFor('both replays at the receiver', () => accepted(local).length === 4);
    expect(accepted(local).slice(2)).toMatchObject([
      { id: sent[0]!.id, duplicate: true },
      { id: sent[1]!.id, duplicate: false },
    ]);
    const missing = await replay('999999', port);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('keeps no delivery 999999');
  });

  test("--raw sends svc's own signature: the real secret's receiver takes it, the development secret's refuses it", async () => {
    const real = receiver(RELAY_SECRET);
    const realPort = await portOf(real, RECEIVER_PORT);
    const raw = await replay(String(sent[3]!.seq), realPort, ['--raw'], {});
    expect(raw.code).toBe(0);
    await waitFor('the raw delivery at the real receiver', () => ids(real).includes(sent[3]!.id));
    expect(accepted(real)[0]!.body.equals(Buffer.from(sent[3]!.body))).toBe(true);
    const refused = await replay(String(sent[3]!.seq), await portOf(local, RECEIVER_PORT), ['--raw'], {});
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(new RegExp(`${sent[3]!.id} -> 401 signature_mismatch in \\d+ ms\\n$`));
    // A raw replay takes no development secret: it would not be used.
    expect((await replay(String(sent[3]!.seq), realPort, ['--raw', '--secret-file', work.path('board-secret.txt')], {})).code).toBe(2);
    await end(real);
  });
});

describe('a local receiver that is down, and the bots', () => {
  let local: Proc;
  let port: number;
  let steady: Proc;
  // The relay's sequence number of the last delivery the listener forwarded.
  let forwarded: number | undefined;

  beforeAll(async () => {
    local = receiver(DEV_SECRET);
    port = await portOf(local, RECEIVER_PORT);
    steady = listener('steady', port);
    await listening(steady);
  });

  test('each bot of the map has its own path and secret; its deliveries reach the local bot receiver re-signed', async () => {
    const one = await sendBot(url, BOT_SECRETS[BOT_1], BOT_1);
    const two = await sendBot(url, BOT_SECRETS[BOT_2], BOT_2);
    expect([one.status, two.status]).toEqual([200, 200]);
    // Another bot's secret, or the single-bot path, is refused.
    expect((await sendBot(url, BOT_SECRETS[BOT_2], BOT_1)).status).toBe(401);
    expect((await sendBot(url, BOT_SECRETS[BOT_1])).status).toBe(404);
    await waitFor('both bot updates at the receiver', () => accepted(local).length === 2);
    expect(accepted(local).map((r) => [r.id, r.path])).toEqual([
      [one.id, '/webhooks/bot'],
      [two.id, '/webhooks/bot'],
    ]);
    expect(accepted(local)[1]!.body.equals(Buffer.from(two.body))).toBe(true);
    expect(relay.stdout).toContain(`bot ${BOT_2} messageCreate ${two.id}`);
    forwarded = two.seq;
  });

  test('the cursor holds while it is down, one notice for all, and then everything arrives in order, once', async () => {
    // The listener saves its cursor after the receiver's answer: wait until it has saved the last one.
    await waitFor('the cursor at the last delivery forwarded', () => forwarded !== undefined && cursorOf('steady') === forwarded);
    const before = cursorOf('steady');
    await end(local);
    const missed: Sent[] = [];
    for (let i = 0; i < 4; i++) missed.push(await sendBoardEvent(url, RELAY_SECRET, { title: `while down ${i}` }));
    expect(missed.map((s) => s.status)).toEqual([200, 200, 200, 200]);
    // At least one retry (every 2 s) of the first: still one notice, and the cursor where it was.
    await waitFor('a notice', () => steady.stderr.includes('does not answer'));
    await new Promise((r) => setTimeout(r, 2600));
    expect(steady.stderr.match(/the local receiver does not answer/g)).toHaveLength(1);
    expect(steady.stderr).toContain(`holding at #${missed[0]!.seq}`);
    expect(cursorOf('steady')).toBe(before);
    expect(steady.stdout).not.toContain(missed[0]!.id);

    local = receiver(DEV_SECRET, { port });
    await waitFor('the 4 missed at the receiver', () => accepted(local).length >= 4, 8000);
    await waitFor('the cursor at the last', () => cursorOf('steady') === missed[3]!.seq);
    expect(ids(local)).toEqual(missed.map((s) => s.id));
    expect(accepted(local).every((r) => !r.duplicate)).toBe(true);
    expect(steady.stderr.match(/the local receiver answers again/g)).toHaveLength(1);
    for (const s of missed) expect(steady.stdout).toMatch(new RegExp(`${s.id} -> 200 in \\d+ ms`));
  });
});

test('--to on another machine is refused unless --allow-remote-target', async () => {
  const env = { env: { SVC_RELAY_TOKEN: token, SVC_WEBHOOK_SECRET: DEV_SECRET } };
  const remote = await runCli(['listen', '--relay', url, '--to', 'http://192.0.2.10:3000', '--replay', '1'], env);
  expect(remote.code).toBe(2);
  expect(remote.stderr).toMatch(/--to must be on this machine .*--allow-remote-target/);
  const remoteBot = await runCli(
    ['listen', '--relay', url, '--to', 'http://[::1]:3000', '--bot-to', 'http://localhost.example.com:3000', '--replay', '1'],
    env,
  );
  expect(remoteBot.code).toBe(2);
  expect(remoteBot.stderr).toContain('--bot-to must be on this machine');
  // Allowed: the target passes, and the replay goes as far as the relay (which keeps no such delivery).
  const allowed = await runCli(['listen', '--relay', url, '--to', 'http://192.0.2.10:3000', '--allow-remote-target', '--replay', 'no-such-delivery'], env);
  expect(allowed.code).toBe(1);
  expect(allowed.stderr).toContain('keeps no delivery no-such-delivery');
});
