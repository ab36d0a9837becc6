import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BOARD_SECRET, fixture, signBoard } from '../support/sign';
import { useDatabase } from './database';

/**
 * Receivers in processes of their own sharing one PostgreSQL, each handler writing its effect row in
 * ctx.transaction; processes are killed with SIGKILL at the points where a store outside the
 * handler's transaction would lose or repeat the effect.
 */
const SCRIPT = join(__dirname, 'children', 'receiver.ts');

interface Receiver {
  readonly child: ChildProcess;
  readonly url: string;
  /** Resolves when the process prints `reached <point> <id>`. */
  reached(point: string, id: string): Promise<void>;
}

const db = useDatabase([
  'CREATE TABLE runs (delivery_id text NOT NULL, pid int NOT NULL)',
  'CREATE TABLE effects (delivery_id text NOT NULL, pid int NOT NULL)',
]);
const children: ChildProcess[] = [];

afterAll(async () => {
  await Promise.all(children.map(killed));
});

function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid!, 'SIGKILL');
  return exited;
}

async function startReceiver(mode: 'normal' | 'in-transaction' | 'after-commit' = 'normal'): Promise<Receiver> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    env: { PATH: process.env.PATH ?? '', RECEIVER_PG_URL: db.server.url, RECEIVER_MODE: mode, RECEIVER_SECRET: BOARD_SECRET },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const wake of waiters.splice(0)) wake();
  });
  const until = async (match: (line: string) => boolean): Promise<string> => {
    for (;;) {
      const found = lines.find(match);
      if (found !== undefined) return found;
      if (child.exitCode !== null) throw new Error(`receiver exited with ${child.exitCode}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const port = (await until((l) => l.startsWith('listening '))).split(' ')[1];
  return {
    child,
    url: `http://127.0.0.1:${port}/webhooks/board`,
    reached: async (point, id) => void (await until((l) => l === `reached ${point} ${id}`)),
  };
}

async function deliver(receiver: Receiver, event: Record<string, any>): Promise<{ status: number; body: any }> {
  const signed = signBoard(event);
  const res = await fetch(receiver.url, { method: 'POST', headers: signed.headers, body: signed.body });
  return { status: res.status, body: await res.json() };
}

/** Retries like the sender (here every 200 ms) until a 2xx, as long as the claim of a killed attempt holds. */
async function deliverUntilAccepted(receiver: Receiver, event: Record<string, any>): Promise<{ status: number; body: any }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await deliver(receiver, event);
    if (res.status === 200 || Date.now() > deadline) return res;
    expect(res.status).toBe(409); // the killed attempt's claim, until its lease lapses
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Sends a delivery to a receiver that stops at `point`, kills it there with SIGKILL (its request gets
 * no answer), and returns the delivery and a second receiver for the retry.
 */
async function killedAt(point: 'in-transaction' | 'after-commit'): Promise<{ event: Record<string, any>; other: Receiver }> {
  const doomed = await startReceiver(point);
  const other = await startReceiver();
  const event = fixture('board', 'task.created');
  const lost = deliver(doomed, event).catch(() => 'connection lost');
  await doomed.reached(point, event.id);
  await killed(doomed.child);
  expect(await lost).toBe('connection lost');
  return { event, other };
}

const count = async (table: 'runs' | 'effects', id: string) =>
  Number((await db.server.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE delivery_id = $1`, [id]))[0]!.n);

describe('receiver processes sharing one PostgreSQL', () => {
  it('run the handler once when the same delivery arrives 50 times at once at two processes', async () => {
    const receivers = [await startReceiver(), await startReceiver()];
    const event = fixture('board', 'task.created');
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => deliver(receivers[i % 2]!, event)));
    expect(await count('runs', event.id)).toBe(1);
    expect(await count('effects', event.id)).toBe(1);
    expect(answers.filter((a) => a.status === 200 && a.body.duplicate !== true)).toHaveLength(1);
    expect(answers.every((a) => a.status === 200 || a.status === 409)).toBe(true);
    await Promise.all(receivers.map((r) => killed(r.child)));
  }, 30_000);

  it('keep no row of a process killed inside the transaction, before COMMIT; the retry writes it once', async () => {
    const { event, other } = await killedAt('in-transaction');
    expect(await count('effects', event.id)).toBe(0);
    const retry = await deliverUntilAccepted(other, event);
    expect(retry).toEqual({ status: 200, body: { ok: true } });
    expect(await count('effects', event.id)).toBe(1);
    expect((await db.server.query('SELECT pid FROM effects WHERE delivery_id = $1', [event.id]))[0]).toEqual({ pid: other.child.pid });
    expect(await deliver(other, event)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    expect(await count('effects', event.id)).toBe(1);
    await killed(other.child);
  }, 30_000);

  it('answer the retry of a delivery whose process was killed after COMMIT as a duplicate, with no second row', async () => {
    const { event, other } = await killedAt('after-commit');
    expect(await deliver(other, event)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    expect(await count('effects', event.id)).toBe(1);
    expect(await count('runs', event.id)).toBe(1);
    await killed(other.child);
  }, 30_000);
});
