import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { postgresMigrationSql } from '../../src';
import { boardEvent, signBoardEvent } from '../../src/testing';
import { spawnCli } from '../cli/run-cli';
import { PostgresServer } from '../support/postgres-server';
import { RedisServer } from '../support/redis-server';

/**
 * Parking with real processes: a receiver process whose clock the test drives, on each store that
 * has a parking lot. The test plays svc: one delivery whose handler always throws, sent on svc's
 * retry schedule (1, 2, 4 … minutes, at most an hour apart); the first attempt at or past 20 h is
 * answered 200 parked. Then the receiver is killed with SIGKILL and started again with the handler
 * fixed, and the parked delivery is replayed (by the CLI on the shared stores): it runs exactly once.
 */
const SCRIPT = join(__dirname, 'children', 'receiver.ts');
const SECRET = 'parking-process-secret-0123456789';
const HOUR = 3_600_000;
const MINUTE = 60_000;
const START = Date.parse('2026-11-02T08:00:00Z');

type StoreKind = 'memory' | 'redis' | 'postgres';

interface Receiver {
  readonly child: ChildProcess;
  readonly base: string;
  /** The delivery ids its handler ran, in order. */
  readonly ran: string[];
}

const children: ChildProcess[] = [];
let redis: RedisServer;
let postgres: PostgresServer;

beforeAll(async () => {
  [redis, postgres] = await Promise.all([RedisServer.start(), PostgresServer.start()]);
  await postgres.query(postgresMigrationSql());
}, 60_000);

afterAll(async () => {
  await Promise.all(children.map(killed));
  await Promise.all([redis?.close(), postgres?.close()]);
});

function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid!, 'SIGKILL');
  return exited;
}

function storeUrl(kind: StoreKind): string {
  return kind === 'redis' ? redis.url : kind === 'postgres' ? postgres.url : '';
}

async function startReceiver(kind: StoreKind, env: Record<string, string> = {}): Promise<Receiver> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    env: { PATH: process.env.PATH ?? '', PARK_STORE: kind, PARK_STORE_URL: storeUrl(kind), PARK_SECRET: SECRET, PARK_START_MS: String(START), ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const ran: string[] = [];
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('listening ')) resolve(line.split(' ')[1]!);
      if (line.startsWith('ran ')) ran.push(line.slice(4));
    });
  });
  return { child, base: `http://127.0.0.1:${port}`, ran };
}

const control = (r: Receiver, path: string) =>
  fetch(`${r.base}${path}`, { method: 'POST' }).then(async (res) => ({ status: res.status, body: await res.json() }));

/** One attempt, as svc sends it at `at`: the receiver's clock set to it, signed with its timestamp. */
async function attemptAt(r: Receiver, event: object, at: number): Promise<{ status: number; body: Record<string, unknown> }> {
  await control(r, `/clock?ms=${at}`);
  const signed = signBoardEvent(event, { secret: SECRET, timestamp: Math.floor(at / 1000) });
  const res = await fetch(`${r.base}/webhooks/board`, { method: 'POST', headers: signed.headers, body: signed.body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** svc's schedule from START until the first 2xx: each attempt's offset from the first and its answer. */
async function svcRetries(r: Receiver, event: object) {
  const answers: Array<{ after: number; status: number; body: Record<string, unknown> }> = [];
  let after = 0;
  for (let wait = MINUTE; after < 30 * HOUR; wait = Math.min(wait * 2, HOUR)) {
    const answer = await attemptAt(r, event, START + after);
    answers.push({ after, ...answer });
    if (answer.status === 200) break;
    after += wait;
  }
  return answers;
}

const cliStore = (kind: StoreKind) => (kind === 'redis' ? { REDIS_URL: redis.url } : { DATABASE_URL: postgres.url });

describe.each(['memory', 'redis', 'postgres'] as const)('on the %s store', (kind) => {
  it('parks the first attempt at or past 20 h of failure, and a replay after the fix runs it exactly once', async () => {
    let receiver = await startReceiver(kind);
    const event = boardEvent('task.created');
    const answers = await svcRetries(receiver, event);
    const parked = answers.at(-1)!;
    expect(answers.slice(0, -1).every((a) => a.status === 500 && a.body.code === 'handler_failed' && a.after < 20 * HOUR)).toBe(true);
    expect(parked).toMatchObject({ status: 200, body: { ok: true, parked: true } });
    expect(parked.after).toBeGreaterThanOrEqual(20 * HOUR);
    // svc's next attempt is a duplicate: nothing runs.
    expect(await attemptAt(receiver, event, START + parked.after + HOUR)).toMatchObject({ status: 200, body: { duplicate: true } });

    if (kind === 'memory') {
      // The lot lives in the process: replayed there.
      await control(receiver, '/fix');
      expect(await control(receiver, `/replay?id=${event.id}`)).toMatchObject({ status: 200, body: { outcome: 'handled' } });
      expect(await control(receiver, `/replay?id=${event.id}`)).toMatchObject({ status: 200, body: { outcome: 'duplicate' } });
      expect(receiver.ran).toEqual([event.id]);
      return;
    }
    // The shared store keeps it across a crash of the receiver.
    await killed(receiver.child);
    receiver = await startReceiver(kind);
    await control(receiver, '/fix');
    // The CLI signs its replay with the time of sending: the receiver's clock back to the real one.
    await control(receiver, `/clock?ms=${Date.now()}`);
    const env = { ...cliStore(kind), SVC_BOARD_WEBHOOK_SECRET: SECRET };
    const listed = await spawnCli(['parked', 'list', '--json'], { env });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ id: event.id, reason: 'failing', attempts: answers.length - 1, firstFailedAt: START }),
    ]);
    const url = `${receiver.base}/webhooks/board`;
    const first = await spawnCli(['parked', 'replay', event.id, '--url', url], { env });
    expect([first.code, first.stdout]).toEqual([0, `replayed, handled: ${event.id}\n`]);
    const second = await spawnCli(['parked', 'replay', event.id, '--url', url], { env });
    expect([second.code, second.stdout]).toEqual([0, `already replayed (duplicate): ${event.id}\n`]);
    expect(receiver.ran).toEqual([event.id]);
    // The secret never reaches the CLI's output.
    expect(`${listed.stdout}${first.stdout}${first.stderr}`).not.toContain(SECRET);
    const unknown = await spawnCli(['parked', 'replay', '00000000-0000-4000-8000-000000000000', '--url', url], { env });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('no parked delivery with id 00000000-0000-4000-8000-000000000000');
  }, 60_000);

  it("parks a schema violation at once under schemaPolicy 'park'", async () => {
    const receiver = await startReceiver(kind, { PARK_SCHEMA: 'park', PARK_PREFIX: 'schema:' });
    const event = boardEvent('task.created');
    const broken = { ...event, task: { ...event.task, title: 42 } };
    expect(await attemptAt(receiver, broken, START)).toMatchObject({ status: 200, body: { ok: true, parked: true } });
    expect(await attemptAt(receiver, broken, START + MINUTE)).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(receiver.ran).toEqual([]);
    if (kind === 'memory') return;
    const listed = await spawnCli(['parked', 'show', event.id, '--json', ...(kind === 'redis' ? ['--prefix', 'schema:'] : [])], { env: cliStore(kind) });
    expect(JSON.parse(listed.stdout)).toMatchObject({ id: event.id, reason: 'schema', attempts: 0, body: JSON.stringify(broken) });
    await killed(receiver.child);
  }, 30_000);
});
