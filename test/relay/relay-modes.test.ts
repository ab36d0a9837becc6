import { mkdirSync, writeFileSync } from 'node:fs';
import { RedisServer } from '../support/redis-server';
import {
  accepted,
  cli,
  createToken,
  endAll,
  portOf,
  receiver,
  RECEIVER_PORT,
  RELAY_PORT,
  sendBoard,
  waitFor,
  workDir,
  listenProcess,
  type Proc,
} from './relay-processes';

/**
 * The relay's other modes with real processes on 127.0.0.1: `--mirror` (svc gets the listener's
 * local answer), a corrupt data file at start, and Redis storage (a real redis-server; without it
 * this fails), including the 503 of a relay that cannot store.
 */

const RELAY_SECRET = 'relay-board-secret-0123456789abcdef';
const DEV_SECRET = 'dev-secret-of-carol-0123456789';
const work = workDir({ 'board-secret.txt': `${RELAY_SECRET}\n` });

function relayArgs(backend: readonly string[], extra: readonly string[] = []): string[] {
  return ['relay', '--host', '127.0.0.1', '--port', '0', '--board-secret-file', work.path('board-secret.txt'), ...backend, ...extra];
}

function listener(relayUrl: string, port: number, name: string): Proc {
  const files = { tokenFile: work.path(`${name}.token`), cursorFile: work.path(`${name}.cursor`) };
  return listenProcess({ relayUrl, port, ...files, env: { SVC_BOARD_WEBHOOK_SECRET: DEV_SECRET } });
}

afterAll(async () => {
  await endAll();
  work.cleanup();
});

test('with --mirror, svc gets the non-2xx of a failing local receiver, and the delivery is still stored', async () => {
  const dataDir = work.path('mirror');
  writeFileSync(work.path('carol.token'), await createToken('carol', ['--data-dir', dataDir]));
  const relay = cli(relayArgs(['--data-dir', dataDir], ['--mirror', 'carol']));
  const failing = receiver(DEV_SECRET, { fail: true });
  const [relayPort, port] = await Promise.all([portOf(relay, RELAY_PORT), portOf(failing, RECEIVER_PORT)]);
  const url = `http://127.0.0.1:${relayPort}`;
  // Nobody listening as carol: no answer to mirror.
  expect((await sendBoard(url, RELAY_SECRET)).status).toBe(504);
  const carol = listener(url, port, 'carol');
  await waitFor('carol to connect', () => carol.stderr.includes('listening as carol'));
  const failed = await sendBoard(url, RELAY_SECRET);
  expect(failed.status).toBe(500);
  expect(relay.stdout).toContain(`${failed.id}`);
  await waitFor('the listener’s line', () => carol.stdout.includes(`${failed.id} -> 500 handler_failed`));
});

test('a corrupt data file is reported at start with what was kept; the torn last line is dropped', async () => {
  const dataDir = work.path('corrupt');
  mkdirSync(dataDir);
  const record = (seq: number): string =>
    JSON.stringify({
      seq,
      webhook: 'board',
      id: `0000000${seq}-0000-4000-8000-000000000000`,
      type: 'ping',
      scope: 'b',
      receivedAt: Date.now(),
      headers: {},
      body: '{}',
    });
  writeFileSync(`${dataDir}/deliveries.jsonl`, `${record(1)}\nnot json at all\n${record(3)}\n{"seq":4,"webhook":"bo`);
  const token = await createToken('dave', ['--data-dir', dataDir]);
  const relay = cli(relayArgs(['--data-dir', dataDir]));
  const relayPort = await portOf(relay, RELAY_PORT);
  expect(relay.stdout).toContain('data file: kept 2 deliveries');
  expect(relay.stdout).toMatch(/dropped a torn last line/);
  expect(relay.stdout).toMatch(/skipped 1 corrupt line \(line 2\); the original is kept as .*deliveries\.jsonl\.corrupt-\d+/);
  const kept = await fetch(`http://127.0.0.1:${relayPort}/relay/deliveries/3`, { headers: { authorization: `Bearer ${token}` } });
  expect(kept.status).toBe(200);
  const torn = await fetch(`http://127.0.0.1:${relayPort}/relay/deliveries/4`, { headers: { authorization: `Bearer ${token}` } });
  expect(torn.status).toBe(404);
  // The next delivery continues the numbering: nothing kept is overwritten.
  const next = await sendBoard(`http://127.0.0.1:${relayPort}`, RELAY_SECRET);
  expect(next.status).toBe(200);
  expect(relay.stdout).toContain(`stored #4 board`);
});

describe('with Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await endAll();
    await redis.close();
  });

  test('deliveries are stored in Redis and streamed; with Redis gone the relay answers 503', async () => {
    const backend = ['--redis-url', redis.url];
    writeFileSync(work.path('erin.token'), await createToken('erin', backend));
    const relay = cli(relayArgs(backend));
    const local = receiver(DEV_SECRET);
    const [relayPort, port] = await Promise.all([portOf(relay, RELAY_PORT), portOf(local, RECEIVER_PORT)]);
    const url = `http://127.0.0.1:${relayPort}`;
    expect(relay.stdout).toContain(`store redis redis://127.0.0.1:${redis.port}`);
    const erin = listener(url, port, 'erin');
    await waitFor('erin to connect', () => erin.stderr.includes('listening as erin'));
    const sent = [await sendBoard(url, RELAY_SECRET), await sendBoard(url, RELAY_SECRET), await sendBoard(url, RELAY_SECRET)];
    expect(sent.map((s) => s.status)).toEqual([200, 200, 200]);
    await waitFor('3 at the receiver', () => accepted(local).length === 3);
    expect(accepted(local).map((r) => r.id)).toEqual(sent.map((s) => s.id));

    await redis.stop();
    const refused = await sendBoard(url, RELAY_SECRET);
    expect(refused.status).toBe(503);
    await redis.resume();
  });
});
