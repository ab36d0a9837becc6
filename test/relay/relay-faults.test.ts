import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { boardEvent } from '../../src/testing';
import { signBoardEvent } from '../../src/testing/sign-delivery';
import { runCli } from '../cli/run-cli';
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
  signal,
  waitFor,
  workDir,
  type Proc,
  type Sent,
  listenProcess,
} from './relay-processes';

/**
 * The relay's bounds and faults with real processes on 127.0.0.1 and one relay (file store, 2
 * streams per token, 4 events written ahead, a listener cut off after 1 s without reading): a
 * data file that cannot be written, a token revoked and created again, the streams per token, and
 * a stopped listener that is cut off without holding back the other.
 */

const RELAY_SECRET = 'relay-board-secret-0123456789abcdef';
const DEV_SECRET = 'dev-secret-of-jack-0123456789ab';
const work = workDir({ 'board-secret.txt': `${RELAY_SECRET}\n` });
const dataDir = work.path('data');
const dataFile = `${dataDir}/deliveries.jsonl`;
let relay: Proc;
let url: string;

function listener(name: string, port: number): Proc {
  const files = { tokenFile: work.path(`${name}.token`), cursorFile: work.path(`${name}.cursor`) };
  return listenProcess({ relayUrl: url, port, ...files, env: { SVC_WEBHOOK_SECRET: DEV_SECRET } });
}

async function tokenFile(name: string): Promise<string> {
  const token = await createToken(name, ['--data-dir', dataDir]);
  writeFileSync(work.path(`${name}.token`), `${token}\n`);
  return token;
}

const listening = (proc: Proc): Promise<true> => waitFor(`listener ${proc.pid} to connect (${proc.stderr})`, () => proc.stderr.includes('listening as'));
const ids = (proc: Proc): string[] => accepted(proc).map((r) => r.id);
const stream = (token: string, signal: AbortSignal): Promise<Response> =>
  fetch(`${url}/relay/stream`, { headers: { authorization: `Bearer ${token}` }, signal }).catch(() => new Response(null, { status: 599 }));

beforeAll(async () => {
  await tokenFile('kim');
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
    '--max-streams',
    '2',
    '--max-buffered',
    '4',
    '--drain-timeout',
    '1s',
  ]);
  url = `http://127.0.0.1:${await portOf(relay, RELAY_PORT)}`;
});

afterAll(async () => {
  await endAll();
  work.cleanup();
});

test('a data file that cannot be written is 503 and acknowledges nothing; with it back, the relay stores again', async () => {
  const first = await sendBoard(url, RELAY_SECRET);
  expect(first.status).toBe(200);
  // The data file replaced by a directory while the relay runs: its writes have nowhere to go.
  rmSync(dataFile);
  mkdirSync(dataFile);
  const refused = await fetch(`${url}/webhooks/board`, { method: 'POST', ...signBoardEvent(boardEvent('task.created'), { secret: RELAY_SECRET }) });
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('5');
  expect(relay.stdout).toMatch(/could not store board delivery .*: answered 503, svc retries it/);
  const token = readFileSync(work.path('kim.token'), 'utf8').trim();
  const looked = await fetch(`${url}/relay/deliveries/${first.seq! + 1}`, { headers: { authorization: `Bearer ${token}` } });
  expect(looked.status).toBe(404);

  rmSync(dataFile, { recursive: true });
  const next = await sendBoard(url, RELAY_SECRET);
  expect(next).toMatchObject({ status: 200, seq: first.seq! + 1 });
  // Written anew: what was stored before the fault, and what came after it.
  const kept = readFileSync(dataFile, 'utf8');
  expect(kept).toContain(first.id);
  expect(kept).toContain(next.id);
});

test('a token revoked and created again for the same name ends the streams of the old one', async () => {
  const local = receiver(DEV_SECRET);
  await tokenFile('lou');
  const old = listener('lou', await portOf(local, RECEIVER_PORT));
  await listening(old);
  expect((await runCli(['relay', 'token', 'revoke', 'lou', '--data-dir', dataDir])).code).toBe(0);
  const fresh = await createToken('lou', ['--data-dir', dataDir]);
  expect(await waitFor('the old token’s listener to exit', () => old.ended && old.exited, 6000)).toBe(1);
  expect(relay.stdout).toContain('listener lou disconnected: its token was revoked');
  expect(old.stderr).toMatch(/refused the access token/);
  const after = await sendBoard(url, RELAY_SECRET);
  expect(after.status).toBe(200);
  // The new token of the name is good.
  const stop = new AbortController();
  expect((await stream(fresh, stop.signal)).status).toBe(200);
  stop.abort();
  expect(ids(local)).not.toContain(after.id);
});

test('a token has at most --max-streams streams open at once', async () => {
  const token = await createToken('max', ['--data-dir', dataDir]);
  const stop = new AbortController();
  const statuses = (await Promise.all([stream(token, stop.signal), stream(token, stop.signal), stream(token, stop.signal)])).map((r) => r.status);
  expect(statuses.sort()).toEqual([200, 200, 429]);
  stop.abort();
  // Closed streams free their places.
  const again = new AbortController();
  await waitFor('the closed streams gone', () => (relay.stdout.match(/listener max disconnected/g) ?? []).length === 2);
  expect((await stream(token, again.signal)).status).toBe(200);
  again.abort();
});

test('a stopped listener is cut off without holding back the other, and resumes from its cursor with exactly what it missed', async () => {
  await tokenFile('ned');
  const [slowLocal, quickLocal] = [receiver(DEV_SECRET, { quiet: true }), receiver(DEV_SECRET, { quiet: true })];
  const slow = listener('kim', await portOf(slowLocal, RECEIVER_PORT));
  const quick = listener('ned', await portOf(quickLocal, RECEIVER_PORT));
  await Promise.all([listening(slow), listening(quick)]);
  signal(slow, 'SIGSTOP');
  // Large deliveries fill the stopped listener's socket; the relay writes 4 ahead, then waits 1 s.
  const sent: Sent[] = [];
  const cut = (): boolean => relay.stdout.includes('listener kim disconnected: it did not read its stream');
  while (!cut() && sent.length < 80) {
    sent.push(await sendBoard(url, RELAY_SECRET, 'x'.repeat(200 * 1024)));
    await waitFor('the quick listener to keep up', () => accepted(quickLocal).length === sent.length);
  }
  await waitFor('the cut-off', cut, 3000);
  expect(sent.every((s) => s.status === 200)).toBe(true);
  expect(relay.stdout).not.toContain('listener ned disconnected');
  expect(ids(slowLocal)).toEqual([]);

  signal(slow, 'SIGCONT');
  await waitFor('the stopped listener to resume', () => accepted(slowLocal).length >= sent.length, 15_000);
  await new Promise((r) => setTimeout(r, 300));
  expect(ids(slowLocal)).toEqual(sent.map((s) => s.id));
  expect(ids(quickLocal)).toEqual(sent.map((s) => s.id));
  expect(slow.stderr).toMatch(/reconnecting from the cursor/);
});
