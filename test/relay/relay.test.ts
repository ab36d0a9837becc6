import { writeFileSync } from 'node:fs';
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
  sendBoard,
  sendBot,
  signal,
  waitFor,
  workDir,
  type Proc,
  type Sent,
  listenProcess,
} from './relay-processes';

/**
 * The relay with real processes on 127.0.0.1: one relay (file store), two listeners and the two
 * developers' receivers, each receiver with its own development secret (never the relay's).
 */

const RELAY_SECRET = 'relay-board-secret-0123456789abcdef';
const RELAY_BOT_SECRET = 'relay-bot-secret-0123456789abcdef';
const SECRET_A = 'dev-secret-of-alice-0123456789';
const SECRET_B = 'dev-secret-of-bob-0123456789ab';

const work = workDir({ 'board-secret.txt': `${RELAY_SECRET}\n` });
const dataDir = work.path('data');
let relay: Proc;
let relayUrl: string;
let relayPort: number;
let receiverA: Proc;
let receiverB: Proc;
let portA: number;
let portB: number;
let listenerA: Proc;
let listenerB: Proc;
const sent: Sent[] = [];

function startRelay(port: number): Proc {
  return cli(
    [
      'relay',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      '--board-secret-file',
      work.path('board-secret.txt'),
      '--max-buffered',
      '8',
    ],
    { SVC_BOT_WEBHOOK_SECRET: RELAY_BOT_SECRET },
  );
}

function startListener(name: string, port: number, secret: string): Proc {
  const files = { tokenFile: work.path(`${name}.token`), cursorFile: work.path(`${name}.cursor`) };
  return listenProcess({ relayUrl, port, ...files, env: { SVC_WEBHOOK_SECRET: secret } });
}

const listening = (proc: Proc): Promise<true> => waitFor(`listener ${proc.pid} to connect (${proc.stderr})`, () => proc.stderr.includes('listening as'));
const ids = (proc: Proc): string[] => accepted(proc).map((r) => r.id);

async function deliverAll(count: number, send: () => Promise<Sent> = () => sendBoard(relayUrl, RELAY_SECRET)): Promise<Sent[]> {
  const batch: Sent[] = [];
  for (let i = 0; i < count; i++) batch.push(await send());
  sent.push(...batch);
  return batch;
}

beforeAll(async () => {
  writeFileSync(work.path('alice.token'), `${await createToken('alice', ['--data-dir', dataDir])}\n`);
  writeFileSync(work.path('bob.token'), `${await createToken('bob', ['--data-dir', dataDir])}\n`);
  relay = startRelay(0);
  receiverA = receiver(SECRET_A);
  receiverB = receiver(SECRET_B);
  [relayPort, portA, portB] = await Promise.all([portOf(relay, RELAY_PORT), portOf(receiverA, RECEIVER_PORT), portOf(receiverB, RECEIVER_PORT)]);
  relayUrl = `http://127.0.0.1:${relayPort}`;
  listenerA = startListener('alice', portA, SECRET_A);
  listenerB = startListener('bob', portB, SECRET_B);
  await Promise.all([listening(listenerA), listening(listenerB)]);
});

afterAll(async () => {
  await endAll();
  work.cleanup();
});

test('20 signed deliveries reach both receivers, re-signed with each one’s own secret, the bodies byte-identical', async () => {
  const batch = [...(await deliverAll(18)), ...(await deliverAll(2, () => sendBot(relayUrl, RELAY_BOT_SECRET)))];
  expect(batch.map((s) => s.status)).toEqual(Array.from({ length: 20 }, () => 200));
  await waitFor('20 deliveries at both receivers', () => accepted(receiverA).length >= 20 && accepted(receiverB).length >= 20);
  for (const proc of [receiverA, receiverB]) {
    const got = new Map(accepted(proc).map((r) => [r.id, r.body]));
    expect(got.size).toBe(20);
    for (const s of batch) expect(got.get(s.id)?.equals(Buffer.from(s.body))).toBe(true);
  }
  // One line per delivery: the local answer (written once the receiver has answered), and nothing secret.
  const answered = () => listenerA.stdout.split('\n').filter((l) => / -> 200 in \d+ ms$/.test(l));
  await waitFor('a line per delivery from listener A', () => answered().length >= 20);
  expect(answered()).toHaveLength(20);
  for (const proc of [relay, listenerA, listenerB])
    for (const secret of [RELAY_SECRET, RELAY_BOT_SECRET, SECRET_A, SECRET_B]) expect(proc.stdout + proc.stderr).not.toContain(secret);
});

test('a listener killed while 5 are delivered gets exactly those 5 when it restarts; a stopped one when it continues', async () => {
  await end(listenerB);
  const missed = await deliverAll(5);
  await waitFor('25 at A', () => accepted(receiverA).length === 25);
  expect(accepted(receiverB)).toHaveLength(20);
  listenerB = startListener('bob', portB, SECRET_B);
  await waitFor('25 at B', () => accepted(receiverB).length >= 25);
  expect(ids(receiverB).slice(20)).toEqual(missed.map((s) => s.id));

  signal(listenerA, 'SIGSTOP');
  const whileStopped = await deliverAll(3);
  await waitFor('28 at B', () => accepted(receiverB).length === 28);
  await new Promise((r) => setTimeout(r, 500));
  expect(accepted(receiverA)).toHaveLength(25);
  signal(listenerA, 'SIGCONT');
  await waitFor('28 at A', () => accepted(receiverA).length >= 28);
  expect(ids(receiverA).slice(25)).toEqual(whileStopped.map((s) => s.id));
  await new Promise((r) => setTimeout(r, 300));
  expect(accepted(receiverA)).toHaveLength(28);
  expect(accepted(receiverB)).toHaveLength(28);
});

test('a forged delivery is 401 at the relay and reaches no listener; an oversized body is 413', async () => {
  const forged = await sendBoard(relayUrl, 'not-the-relay-secret-0123456789');
  expect(forged.status).toBe(401);
  const huge = await sendBoard(relayUrl, RELAY_SECRET, 'x'.repeat(600 * 1024));
  expect(huge.status).toBe(413);
  const [after] = await deliverAll(1);
  await waitFor('the next valid one at both', () => ids(receiverA).includes(after!.id) && ids(receiverB).includes(after!.id));
  for (const proc of [receiverA, receiverB]) {
    expect(ids(proc)).not.toContain(forged.id);
    expect(ids(proc)).not.toContain(huge.id);
  }
});

test('the relay killed with SIGKILL mid-burst and restarted loses no delivery it acknowledged', async () => {
  const burst = Array.from({ length: 12 }, () => sendBoard(relayUrl, RELAY_SECRET).catch((): Sent => ({ id: '', body: '', status: 0 })));
  // Killed while the burst is under way: some acknowledged, some not.
  const storedBefore = (relay.stdout.match(/ stored #/g) ?? []).length;
  await waitFor('some of the burst stored', () => (relay.stdout.match(/ stored #/g) ?? []).length >= storedBefore + 3);
  signal(relay, 'SIGKILL');
  await relay.exited;
  const results = await Promise.all(burst);
  const acknowledged = results.filter((s) => s.status === 200);
  expect(acknowledged.length).toBeGreaterThanOrEqual(3);
  relay = startRelay(relayPort);
  await portOf(relay, RELAY_PORT);
  expect(relay.stdout).toMatch(/data file: kept \d+ deliveries/);
  for (const s of acknowledged) {
    await waitFor(`acknowledged ${s.id} at both receivers`, () => ids(receiverA).includes(s.id) && ids(receiverB).includes(s.id), 15_000);
  }
  // And the relay goes on: a new delivery after the restart reaches both.
  const [next] = await deliverAll(1);
  await waitFor('a delivery after the restart at both', () => ids(receiverA).includes(next!.id) && ids(receiverB).includes(next!.id), 15_000);
});

test('a wrong token is 401 and the listener exits non-zero; a revoked one is cut off and exits too', async () => {
  writeFileSync(work.path('wrong.token'), 'svcrelay_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n');
  const wrong = startListener('wrong', portA, SECRET_A);
  expect(await wrong.exited).toBe(1);
  expect(wrong.stderr).toMatch(/refused the access token/);
  expect(wrong.stderr).not.toContain('svcrelay_AAAA');
  const res = await fetch(`${relayUrl}/relay/stream`, { headers: { authorization: 'Bearer svcrelay_nope' } });
  expect(res.status).toBe(401);
  expect(((await res.json()) as { code: string }).code).toBe('token_invalid');

  const revoked = await runCli(['relay', 'token', 'revoke', 'bob', '--data-dir', dataDir]);
  expect(revoked.code).toBe(0);
  expect(await waitFor('the revoked listener to exit', () => listenerB.ended && listenerB.exited, 8000)).toBe(1);
  expect(listenerB.stderr).toMatch(/refused the access token/);
});
