import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { boardEvent, signBoardEvent } from '../../src/testing';

/**
 * The loop guard of issue 36, end to end: a bot writes to tasks and receives its own writes back.
 * 100 signed board events go over HTTP to a real receiver (a node:http server in a child process,
 * ended by its pid); the 30 the bot made itself are answered `ignored` and run no handler, the 70
 * others are handled. The bot token never appears in anything the process writes, at debug.
 */
const ROOT = join(__dirname, '..', '..');
const CHILD = join(ROOT, 'test', 'support', 'ignore-child.ts');
const SECRET = 'ignore-acceptance-secret-0123456789';
const BOT_ID = '5d3c9a52-7f0e-4b8a-9c1d-2e6f8a9b0c1d';
const SECRET_PART = 'Zq8_rT3-kLm9NpQ2sUvWxY0aBcDeFgHiJkLmNoPqRsT';
const TOKEN = `svc_bot_${BOT_ID}_${SECRET_PART}`;

const actors = {
  self: { id: BOT_ID, is_bot: true, name: 'Sync bot' },
  person: { id: '7b3ab64a-91a7-4fe9-8a0a-4fd1854ae1d3', is_bot: false, name: 'Jonas Weber' },
  otherBot: { id: '0b1c2d3e-4f50-4617-8829-3a4b5c6d7e8f', is_bot: true, name: 'Another bot' },
};
const RULE = { id: 'c3d4e5f6-0718-4293-a4b5-c6d7e8f90a1b', name: 'Close when merged' };

type Maker = 'self' | 'person' | 'otherBot' | 'rule' | 'server';

interface Running {
  readonly child: ChildProcess;
  readonly port: number;
  /** Everything the process wrote so far, stdout and stderr. */
  readonly output: () => string;
}

const started: ChildProcess[] = [];

async function startReceiver(ignore: Record<string, boolean>): Promise<Running> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', CHILD], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, SECRET, TOKEN, IGNORE: JSON.stringify(ignore) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const listening = /\{"listening":(\d+)\}/.exec(out);
    if (listening) return { child, port: Number(listening[1]), output: () => out };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the receiver did not start:\n${out}`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(child.pid!, 'SIGTERM');
  await exited;
}

afterAll(async () => {
  await Promise.all(started.map(stop));
});

function eventBy(maker: Maker) {
  const actor = maker === 'rule' || maker === 'server' ? null : actors[maker];
  return boardEvent('task.updated', { id: randomUUID(), actor, rule: maker === 'rule' ? RULE : null } as never);
}

async function deliver(port: number, event: object): Promise<{ status: number; body: Record<string, unknown> }> {
  const signed = signBoardEvent(event, { secret: SECRET });
  const res = await fetch(`http://127.0.0.1:${port}/webhooks/board`, { method: 'POST', headers: signed.headers, body: signed.body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function handledBy(port: number): Promise<Array<{ id: string; origin: string }>> {
  return (await (await fetch(`http://127.0.0.1:${port}/handled`)).json()) as Array<{ id: string; origin: string }>;
}

/** Lines are written off the request path: waits until `count` lines with `msg` are in the output. */
async function linesOf(receiver: Running, msg: string, count: number): Promise<Array<Record<string, unknown>>> {
  const deadline = Date.now() + 10_000;
  let lines: Array<Record<string, unknown>> = [];
  while (Date.now() < deadline) {
    lines = receiver
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{') && l.includes(`"msg":"${msg}"`))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    if (lines.length >= count) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return lines;
}

/** 30 by the bot itself, spread among 70 by people (50), another bot (10), rules (5) and the server (5). */
function hundredEvents(): Array<{ maker: Maker; event: ReturnType<typeof eventBy> }> {
  const makers: Maker[] = [
    ...Array<Maker>(50).fill('person'),
    ...Array<Maker>(10).fill('otherBot'),
    ...Array<Maker>(5).fill('rule'),
    ...Array<Maker>(5).fill('server'),
  ];
  for (let i = 0; i < 30; i++) makers.splice(i * 3 + 1, 0, 'self');
  return makers.map((maker) => ({ maker, event: eventBy(maker) }));
}

describe('ignore: the loop guard, over HTTP to a receiver in its own process', () => {
  it("answers the bot's own 30 of 100 events ignored and runs no handler for them; handles the 70 others", async () => {
    const receiver = await startReceiver({});
    const events = hundredEvents();
    expect(events).toHaveLength(100);
    const answers = [];
    for (const { event } of events) answers.push(await deliver(receiver.port, event));

    const own = events.flatMap((e, i) => (e.maker === 'self' ? [i] : []));
    expect(own).toHaveLength(30);
    for (const [i, answer] of answers.entries()) {
      expect(answer).toEqual({ status: 200, body: events[i]!.maker === 'self' ? { ok: true, ignored: 'self' } : { ok: true } });
    }

    const handled = await handledBy(receiver.port);
    const expected = events.filter((e) => e.maker !== 'self');
    expect(handled.map((h) => h.id).sort()).toEqual(expected.map((e) => e.event.id).sort());
    const origin = { person: 'person', otherBot: 'bot', rule: 'rule', server: 'server' } as const;
    expect(new Map(handled.map((h) => [h.id, h.origin]))).toEqual(new Map(expected.map((e) => [e.event.id, origin[e.maker as keyof typeof origin]])));

    const ignoredLines = await linesOf(receiver, 'delivery ignored', 30);
    expect(ignoredLines.map((l) => l.deliveryId).sort()).toEqual(own.map((i) => events[i]!.event.id).sort());
    for (const line of ignoredLines) expect(line).toMatchObject({ level: 20, outcome: 'ignored', ignored: 'self', status: 200 });
    expect(await linesOf(receiver, 'delivery received', 70)).toHaveLength(70);

    await stop(receiver.child);
    const output = receiver.output();
    expect(output).not.toContain(TOKEN);
    expect(output).not.toContain(SECRET_PART);
  }, 60_000);

  it("with bots and rules too, answers other bots' events ignored bot and rules' ignored rule; people and the server are handled", async () => {
    const receiver = await startReceiver({ bots: true, rules: true });
    const makers: Maker[] = ['self', 'otherBot', 'rule', 'person', 'server', 'otherBot', 'rule'];
    const events = makers.map(eventBy);
    const answers = [];
    for (const event of events) answers.push((await deliver(receiver.port, event)).body);
    expect(answers).toEqual([
      { ok: true, ignored: 'self' },
      { ok: true, ignored: 'bot' },
      { ok: true, ignored: 'rule' },
      { ok: true },
      { ok: true },
      { ok: true, ignored: 'bot' },
      { ok: true, ignored: 'rule' },
    ]);
    expect(await handledBy(receiver.port)).toEqual([
      { id: events[3]!.id, origin: 'person' },
      { id: events[4]!.id, origin: 'server' },
    ]);
    const ignored = await linesOf(receiver, 'delivery ignored', 5);
    expect(ignored.map((l) => l.ignored)).toEqual(['self', 'bot', 'rule', 'bot', 'rule']);
    await stop(receiver.child);
    expect(receiver.output()).not.toContain(SECRET_PART);
  }, 60_000);
});
