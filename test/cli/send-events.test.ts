import { randomUUID } from 'node:crypto';
import express from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { svcBoardWebhook } from '../../src';
import { boardEvent, silentLogger } from '../../src/testing';
import { listen } from './listen';
import { expectOneLine, runCli, tempFiles } from './run-cli';

const SECRET = 'send-events-board-secret-0123456789';
const EXAMPLE_BOARD = '88f7b448-895e-49f0-9eca-ab4ee416bab1';
const OTHER_BOARD = '0b1c2d3e-4f50-4617-8899-aabbccddeeff';
const DELIVERY_ID = '3f2b8c1e-9d4a-4e6b-a1c7-5e8f0d2b4a69';
/** A value that a flag refuses: it may be a secret pasted in the wrong place, so no error repeats it. */
const PASTED = 'pasted-by-mistake-0123456789abcdef';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What a receiver got: the parsed body and the headers of each request, in order of arrival. */
interface Received {
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

describe('svc-webhooks send, making events', () => {
  let receiver: { url: string; close: () => Promise<void> };
  let capture: { url: string; close: () => Promise<void> };
  /** Events svcBoardWebhook's handlers ran for. */
  const handled: Array<{ id: string; sequence: number; title: string | undefined }> = [];
  /** Requests the capturing server got (it answers 200 to each). */
  const captured: Received[] = [];

  beforeAll(async () => {
    const board = svcBoardWebhook({ secret: SECRET, logger: silentLogger }).onAny((event) => {
      const task = (event as { task?: { title?: string } }).task;
      handled.push({ id: event.id, sequence: event.sequence, title: task?.title });
    });
    receiver = await listen(express().use(board));
    capture = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        captured.push({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>, headers: req.headers });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
  });
  afterAll(async () => {
    await receiver.close();
    await capture.close();
  });
  beforeEach(() => {
    handled.length = 0;
    captured.length = 0;
  });

  const toReceiver = () => ['--url', `${receiver.url}/webhooks/board`, '--secret', SECRET];
  const toCapture = () => ['--url', capture.url, '--secret', SECRET];

  async function sent(args: string[]): Promise<Record<string, unknown>> {
    const result = await runCli(['send', ...args, ...toCapture()]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(captured).toHaveLength(1);
    return captured[0]!.body;
  }

  async function refused(args: string[]): Promise<string> {
    const result = await runCli(['send', ...args, ...toCapture()]);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr);
    expect(result.stdout).toBe('');
    expect(captured).toEqual([]);
    return result.stderr;
  }

  describe('with --set <path>=<value>', () => {
    it('sets fields that the receiver validates and hands to its handlers', async () => {
      const result = await runCli(['send', 'task.created', '--set', 'task.title=Fix login', '--set', 'task.estimate=3', ...toReceiver()]);
      expect(result.code).toBe(0);
      expect(handled).toEqual([expect.objectContaining({ title: 'Fix login' })]);
    });

    it('takes the value as JSON when it parses, and as text otherwise', async () => {
      const body = await sent([
        'task.created',
        '--set',
        'task.priority=3',
        '--set',
        'task.subscribed=true',
        '--set',
        'task.started_at=null',
        '--set',
        'task.description="42"',
        '--set',
        'task.title=Fix login',
        '--set',
        'task.due_on=',
        '--set',
        'task.milestone_progress={"done":1,"total":4}',
        '--set',
        'task.label_ids=["a","b"]',
      ]);
      expect(body.task).toMatchObject({
        priority: 3,
        subscribed: true,
        started_at: null,
        description: '42',
        title: 'Fix login',
        due_on: '',
        milestone_progress: { done: 1, total: 4 },
        label_ids: ['a', 'b'],
      });
    });

    it('applies the settings in the order given, the last one winning', async () => {
      const body = await sent(['task.created', '--set', 'task.title=first', '--set', 'task.title=second']);
      expect((body.task as { title: string }).title).toBe('second');
    });

    it('enters a list by index, and appends at its length', async () => {
      const { task } = boardEvent('task.created');
      const labels = task.label_ids;
      expect(labels.length).toBeGreaterThan(0);
      const body = await sent(['task.created', '--set', 'task.label_ids.0=first', '--set', `task.label_ids.${labels.length}=appended`]);
      expect((body.task as { label_ids: string[] }).label_ids).toEqual(['first', ...labels.slice(1), 'appended']);
    });

    it('sets a field of an object inside a list', async () => {
      const body = await sent(['task.moved_in', '--set', 'changes.0.after.key=ENG-99']);
      expect((body.changes as Array<{ after: { key: string } }>)[0]!.after.key).toBe('ENG-99');
    });

    it('creates the objects missing or null along the path', async () => {
      expect(boardEvent('task.created').rule).toBeNull();
      const body = await sent(['task.created', '--set', 'rule.name=Nightly triage', '--set', 'extra.deep.field=1']);
      expect(body.rule).toEqual({ name: 'Nightly triage' });
      expect(body.extra).toEqual({ deep: { field: 1 } });
    });

    it("keeps a file's id and sends its changed event as compact JSON", async () => {
      const event = boardEvent('task.created');
      const files = tempFiles({ 'event.json': `${JSON.stringify(event, null, 2)}\n` });
      try {
        const body = await sent([files.path('event.json'), '--set', 'task.title=Edited']);
        expect(body).toEqual({ ...event, task: { ...event.task, title: 'Edited' } });
        expect(captured[0]!.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(body))));
      } finally {
        files.cleanup();
      }
    });

    it.each([
      ['a string', 'task.title.x=1', /--set task\.title\.x: task\.title is a string, not an object/],
      ['a number', 'task.number.x=1', /--set task\.number\.x: task\.number is a number/],
      ['a list with a key', 'task.label_ids.first=1', /--set task\.label_ids\.first: task\.label_ids is a list/],
      ['a list past its end', 'task.label_ids.9=1', /is not an index in it or its end/],
      ['a list with a negative index', 'task.label_ids.-1=1', /is not an index/],
      ['an item of a list that is no object', 'task.label_ids.0.x=1', /--set task\.label_ids\.0\.x: task\.label_ids\.0 is not an object/],
    ])('refuses to set through %s', async (_case, setting, message) => {
      const stderr = await refused(['task.moved_in', '--set', setting]);
      expect(stderr).toMatch(message);
    });

    it.each(['__proto__.polluted=1', 'task.constructor.prototype.polluted=1', 'task.prototype=1', 'constructor=1'])(
      'refuses %s, which names a prototype, and changes no object',
      async (setting) => {
        const stderr = await refused(['task.created', '--set', setting]);
        expect(stderr).toMatch(/--set cannot set through "(__proto__|constructor|prototype)"/);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      },
    );

    it.each([
      ['no "="', 'task.title', '--set takes <path>=<value>'],
      ['an empty path', '=Fix', '--set takes <path>=<value>'],
      ['an empty segment', 'task..title=Fix', '--set needs a dot path without empty segments'],
      ['the delivery id', 'id=3f2b8c1e-9d4a-4e6b-a1c7-5e8f0d2b4a69', 'use --id'],
    ])('refuses %s', async (_case, setting, message) => {
      expect(await refused(['task.created', '--set', setting])).toContain(message);
    });

    it('never repeats the value in its error', async () => {
      const stderr = await refused(['task.created', '--set', `task.title.x=${PASTED}`]);
      expect(stderr).not.toContain(PASTED);
      expect(await refused(['task.created', '--set', PASTED])).not.toContain(PASTED);
    });

    it('refuses a file that is not a JSON object', async () => {
      const files = tempFiles({ 'broken.json': '{"id": ' });
      try {
        const stderr = await refused([files.path('broken.json'), '--webhook', 'board', '--set', 'task.title=x']);
        expect(stderr).toContain('--board, --set and --id need a JSON object');
      } finally {
        files.cleanup();
      }
    });
  });

  describe('with --board <id>', () => {
    it("keeps the task on the event's board, so the receiver accepts the moved event", async () => {
      const result = await runCli(['send', 'task.created', '--board', OTHER_BOARD, ...toReceiver()]);
      expect(result.code).toBe(0);
      expect(handled).toHaveLength(1);
    });

    it.each(['task.created', 'task.moved_in', 'task.moved_out', 'task.comment.created'])(
      'sets it wherever %s carries the board id, and nowhere else',
      async (type) => {
        const example = JSON.stringify(boardEvent(type as 'task.created'));
        const places = example.split(EXAMPLE_BOARD).length - 1;
        const body = await sent([type, '--board', OTHER_BOARD]);
        const text = JSON.stringify(body);
        expect(text).not.toContain(EXAMPLE_BOARD);
        expect(text.split(OTHER_BOARD).length - 1).toBe(places);
        expect((body.board as { id: string }).id).toBe(OTHER_BOARD);
        expect((body.task as { board_id: string }).board_id).toBe(OTHER_BOARD);
      },
    );

    it("sets a bot update's boardId fields", async () => {
      const result = await runCli(['send', 'taskCreate', '--board', OTHER_BOARD, '--url', capture.url, '--secret', SECRET]);
      expect(result.code).toBe(0);
      const data = (captured[0]!.body.event as { taskCreate: { boardId: string; task: { boardId: string } } }).taskCreate;
      expect([data.boardId, data.task.boardId]).toEqual([OTHER_BOARD, OTHER_BOARD]);
    });

    it('comes before --set, which can still change one place', async () => {
      const body = await sent(['task.created', '--board', OTHER_BOARD, '--set', `task.board_id=${EXAMPLE_BOARD}`]);
      expect([(body.board as { id: string }).id, (body.task as { board_id: string }).board_id]).toEqual([OTHER_BOARD, EXAMPLE_BOARD]);
    });

    it.each([
      ['an event without a board', ['messageCreate', '--board', OTHER_BOARD], '--board: this event carries no board id'],
      ['a board id that is no UUID', ['task.created', '--board', 'ENG'], '--board must be a board id: a UUID in lower case'],
      ['a board id in upper case', ['task.created', '--board', OTHER_BOARD.toUpperCase()], '--board must be a board id'],
    ])('refuses %s', async (_case, args, message) => {
      expect(await refused(args)).toContain(message);
    });
  });

  describe('with --id <delivery id>', () => {
    it('sends the id in the body and X-Svc-Delivery', async () => {
      const body = await sent(['task.created', '--id', DELIVERY_ID]);
      expect(body.id).toBe(DELIVERY_ID);
      expect(captured[0]!.headers['x-svc-delivery']).toBe(DELIVERY_ID);
    });

    it('replays a delivery: the second send is answered, and shown, as a duplicate', async () => {
      const id = randomUUID();
      const first = await runCli(['send', 'task.created', '--id', id, ...toReceiver()]);
      const second = await runCli(['send', 'task.created', '--id', id, '--set', 'task.title=Changed', ...toReceiver()]);
      expect([first.code, second.code]).toEqual([0, 0]);
      expect(first.stdout).toMatch(/attempt 1: 200 ok in \d+/);
      expect(first.stdout).toContain('delivered\n');
      expect(second.stdout).toMatch(/attempt 1: 200 ok, a duplicate in \d+/);
      expect(second.stdout).toContain('delivered (a duplicate: the receiver had this delivery id already)\n');
      expect(handled.map((e) => e.id)).toEqual([id]);
    });

    it.each([
      ['an id that is no UUID', ['task.created', '--id', 'delivery-1'], '--id must be a delivery id: a UUID'],
      ['--id with --fresh', ['task.created', '--id', DELIVERY_ID, '--fresh'], '--fresh gives the event a new id and --id a fixed one'],
      ['--id with --count', ['task.created', '--id', DELIVERY_ID, '--count', '2'], '--id fixes one delivery'],
    ])('refuses %s', async (_case, args, message) => {
      expect(await refused(args)).toContain(message);
    });

    it('never repeats a refused id or board, which may be a pasted secret', async () => {
      expect(await refused(['task.created', '--id', PASTED])).not.toContain(PASTED);
      expect(await refused(['task.created', '--board', PASTED])).not.toContain(PASTED);
    });
  });

  describe('with --count <n>', () => {
    it('sends n distinct deliveries in order, each with its own id and the next sequence', async () => {
      const { sequence } = boardEvent('task.updated');
      const result = await runCli(['send', 'task.updated', '--count', '4', ...toReceiver()]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^POST \S+: 4 board task\.updated deliveries, in order\n/);
      expect(handled.map((e) => e.sequence)).toEqual([sequence, sequence + 1, sequence + 2, sequence + 3]);
      expect(new Set(handled.map((e) => e.id)).size).toBe(4);
      expect(handled.every((e) => UUID.test(e.id))).toBe(true);
      expect(result.stdout.match(/^delivery [1-4] \(id [0-9a-f-]{36}\): 200 ok in \d+/gm)).toHaveLength(4);
      expect(result.stdout).toContain('sent 4: accepted 4, duplicates 0, refused 0\n');
    });

    it('signs each send afresh', async () => {
      await runCli(['send', 'task.updated', '--count', '3', ...toCapture()]);
      const signatures = captured.map((r) => r.headers['x-svc-signature']);
      expect(new Set(signatures).size).toBe(3);
      expect(captured.map((r) => r.headers['x-svc-delivery'])).toEqual(captured.map((r) => r.body.id));
    });

    it('keeps ping at sequence 0, as svc sends it', async () => {
      await runCli(['send', 'ping', '--count', '3', ...toCapture()]);
      expect(captured.map((r) => r.body.sequence)).toEqual([0, 0, 0]);
    });

    it('applies --set and --board to every delivery', async () => {
      await runCli(['send', 'task.created', '--count', '2', '--board', OTHER_BOARD, '--set', 'task.title=Batch', ...toCapture()]);
      expect(captured.map((r) => [(r.body.board as { id: string }).id, (r.body.task as { title: string }).title])).toEqual([
        [OTHER_BOARD, 'Batch'],
        [OTHER_BOARD, 'Batch'],
      ]);
    });

    it('sends a fraction again with --duplicates, and counts the duplicates the receiver answers', async () => {
      const result = await runCli(['send', 'task.updated', '--count', '10', '--duplicates', '0.3', '--seed', '7', ...toReceiver()]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^POST \S+: 10 board task\.updated deliveries, in order, 3 sent again, seed 7\n/);
      expect(result.stdout.match(/^delivery \d+ again \(id [0-9a-f-]{36}\): 200 ok, a duplicate in/gm)).toHaveLength(3);
      expect(result.stdout).toContain('sent 13: accepted 10, duplicates 3, refused 0\n');
      expect(handled).toHaveLength(10);
      expect(new Set(handled.map((e) => e.id)).size).toBe(10);
    });

    it('sends every delivery again with --duplicates 1, and none with 0', async () => {
      const all = await runCli(['send', 'task.updated', '--count', '3', '--duplicates', '1', ...toCapture()]);
      expect(captured).toHaveLength(6);
      expect(all.stdout).toContain('sent 6: accepted 6, duplicates 0, refused 0\n');
      captured.length = 0;
      await runCli(['send', 'task.updated', '--count', '3', '--duplicates', '0', ...toCapture()]);
      expect(captured).toHaveLength(3);
    });

    it('shuffles with --shuffle, the same way for the same seed', async () => {
      const order = async (seed: string) => {
        captured.length = 0;
        const result = await runCli(['send', 'task.updated', '--count', '8', '--shuffle', '--seed', seed, ...toCapture()]);
        expect(result.code).toBe(0);
        expect(result.stdout).toContain(`8 board task.updated deliveries, shuffled, seed ${seed}\n`);
        return captured.map((r) => r.body.sequence as number);
      };
      const first = await order('7');
      expect(first).not.toEqual([...first].sort((a, b) => a - b));
      expect([...first].sort((a, b) => a - b)).toEqual(Array.from({ length: 8 }, (_, i) => first.reduce((a, b) => Math.min(a, b)) + i));
      expect(await order('7')).toEqual(first);
      expect(await order('8')).not.toEqual(first);
    });

    it('draws a seed when none is given, and prints it so the run can be repeated', async () => {
      const result = await runCli(['send', 'task.updated', '--count', '8', '--shuffle', ...toCapture()]);
      const seed = /, seed (\d+)\n/.exec(result.stdout)![1]!;
      const ids = (text: string) => [...text.matchAll(/^delivery (\d+)/gm)].map((m) => m[1]);
      const again = await runCli(['send', 'task.updated', '--count', '8', '--shuffle', '--seed', seed, ...toCapture()]);
      expect(ids(again.stdout)).toEqual(ids(result.stdout));
    });

    it('sums up the refusals by status, and exits 1 unless every send got a 2xx', async () => {
      const statuses = [200, 500, 401, 500];
      const picky = await listen((req, res) => {
        req.resume().on('end', () => void res.writeHead(statuses.shift() ?? 200).end());
      });
      try {
        const result = await runCli(['send', 'task.updated', '--count', '4', '--url', picky.url, '--secret', SECRET]);
        expect(result.code).toBe(1);
        expect(result.stdout).toContain('sent 4: accepted 1, duplicates 0, refused 3 (401: 1, 500: 2)\n');
        expectOneLine(result.stderr);
        expect(result.stderr).toContain('3 of 4 sends failed');
      } finally {
        await picky.close();
      }
    });

    it('counts a send that got no answer apart from the refusals', async () => {
      const closed = await listen(() => undefined);
      await closed.close();
      const result = await runCli(['send', 'ping', '--count', '2', '--url', closed.url, '--secret', SECRET]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('sent 2: accepted 0, duplicates 0, refused 0, no answer 2\n');
    });

    it.each([
      ['a zero --count', ['--count', '0'], '--count must be a whole number from 1 to 10000'],
      ['a fractional --count', ['--count', '1.5'], '--count must be a whole number'],
      ['a --count in words', ['--count', 'ten'], '--count must be a whole number'],
      ['a --count too large', ['--count', '10001'], '--count must be a whole number'],
      ['a --duplicates above 1', ['--count', '2', '--duplicates', '1.5'], '--duplicates must be a fraction from 0 to 1'],
      ['a negative --duplicates', ['--count', '2', '--duplicates=-0.1'], '--duplicates must be a fraction'],
      ['a --duplicates in hex', ['--count', '2', '--duplicates', '0x1'], '--duplicates must be a fraction'],
      ['a negative --seed', ['--count', '2', '--shuffle', '--seed=-1'], '--seed must be a whole number from 0 to 4294967295'],
      ['--shuffle without --count', ['--shuffle'], '--shuffle works on a batch of deliveries; use it with --count'],
      ['--duplicates without --count', ['--duplicates', '0.5'], '--duplicates works on a batch'],
      ['--seed without --count', ['--seed', '1'], '--seed works on a batch'],
      ['--seed with nothing to choose', ['--count', '2', '--seed', '1'], '--seed chooses the shuffle and the repeats'],
      ['--count with --retry', ['--count', '2', '--retry'], 'not with --count'],
    ])('refuses %s', async (_case, args, message) => {
      expect(await refused(['task.updated', ...args])).toContain(message);
    });

    it('never repeats a refused value, which may be a pasted secret', async () => {
      for (const args of [
        ['--count', PASTED],
        ['--count', '2', '--duplicates', PASTED],
        ['--count', '2', '--shuffle', '--seed', PASTED],
      ]) {
        const stderr = await refused(['task.updated', ...args]);
        expect([args, stderr.includes(args[args.length - 2]!), stderr.includes(PASTED)]).toEqual([args, true, false]);
      }
    });

    it('refuses a file that is not a JSON object', async () => {
      const files = tempFiles({ 'broken.json': '{"id": ' });
      try {
        expect(await refused([files.path('broken.json'), '--webhook', 'board', '--count', '2'])).toContain('--count needs a JSON object');
      } finally {
        files.cleanup();
      }
    });
  });
});
