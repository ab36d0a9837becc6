import {
  memoryStore,
  svcBoardWebhook,
  svcBotWebhook,
  type BoardWebhookOptions,
  type DeliveryRecord,
  type DeliveryStore,
  type ParkingLot,
  type WebhookRequest,
} from '../../src';
import { boardEvent, botCommand, signBoardEvent, signBotUpdate, type SignedDelivery } from '../../src/testing';
import { memoryLogger } from '../support/apps';

const secret = 'parking-secret-0123456789abcdef';
const HOUR = 3_600_000;
const MINUTE = 60_000;
const START = Date.parse('2026-11-02T08:00:00Z');

/** A board webhook on a clock the test drives, its store on the same clock, and what it logged. */
function parkingBoard(options: Partial<BoardWebhookOptions> = {}, storeOptions: Parameters<typeof memoryStore>[0] = {}) {
  const clock = { now: START };
  const now = () => clock.now;
  const logs = memoryLogger();
  const store = (options.store ?? memoryStore({ now, ...storeOptions })) as DeliveryStore;
  const records: DeliveryRecord[] = [];
  const webhook = svcBoardWebhook({ secret, now, logger: logs.logger, ...options, store }).onDelivery((r) => void records.push(r));
  return { clock, webhook, store, logs, records };
}

type Board = ReturnType<typeof parkingBoard>;

/** The delivery as svc sends it at the board's current time: a fresh timestamp and signature, the same id and body. */
function attempt(board: Board, event: object): WebhookRequest {
  const signed: SignedDelivery = signBoardEvent(event, { secret, timestamp: Math.floor(board.clock.now / 1000) });
  return { body: signed.body, headers: { ...signed.headers }, url: '/webhooks/board' };
}

/** svc's retry schedule: 1, 2, 4 ... minutes, at most an hour apart. */
function* retryTimes(from: number): Generator<number> {
  let at = from;
  for (let wait = MINUTE; ; wait = Math.min(wait * 2, HOUR)) yield (at += wait);
}

/** Sends `event` on svc's schedule until the first attempt at or past `untilMs` after the first; answers each attempt's time and answer body. */
async function retryUntil(board: Board, event: object, untilMs: number) {
  const answers: Array<{ at: number; status: number; body: string }> = [];
  const first = board.clock.now;
  const times = retryTimes(first);
  for (;;) {
    const answer = await board.webhook.receive(attempt(board, event));
    answers.push({ at: board.clock.now - first, status: answer.status, body: answer.body });
    if (answer.status === 200 || board.clock.now - first >= untilMs) return answers;
    board.clock.now = times.next().value!;
  }
}

const codeOf = (body: string) => (JSON.parse(body) as { code?: string }).code;

/** A memory store whose parking lot has some calls replaced (a lot that is down). */
function storeWithLot(replaced: Partial<ParkingLot>): DeliveryStore {
  const inner = memoryStore();
  const parking = Object.assign(Object.create(inner.parking) as ParkingLot, replaced);
  return { claim: (id, lease) => inner.claim(id, lease), commit: (id, t) => inner.commit(id, t), release: (id, t) => inner.release(id, t), parking };
}

describe('parking: a delivery that keeps failing is kept, not lost, before svc drops it', () => {
  it('answers every attempt before 20 h of failure 500, and the first at or past 20 h 200 parked, without running the handler', async () => {
    const board = parkingBoard();
    let runs = 0;
    board.webhook.on('task.created', () => {
      runs++;
      throw new Error('the handler is broken');
    });
    const event = boardEvent('task.created');
    const answers = await retryUntil(board, event, 21 * HOUR);
    const last = answers.at(-1)!;
    expect(answers.slice(0, -1).every((a) => a.status === 500 && codeOf(a.body) === 'handler_failed')).toBe(true);
    expect([last.status, last.body]).toEqual([200, '{"ok":true,"parked":true}']);
    expect(last.at).toBeGreaterThanOrEqual(20 * HOUR);
    // The attempt before it came under 20 h after the first failure.
    expect(answers.at(-2)!.at).toBeLessThan(20 * HOUR);
    expect(runs).toBe(answers.length - 1);
    expect(board.records.at(-1)).toMatchObject({ outcome: 'parked', status: 200, deliveryId: event.id });
    // svc's later attempts are duplicates: nothing runs.
    board.clock.now += HOUR;
    expect((await board.webhook.receive(attempt(board, event))).body).toBe('{"ok":true,"duplicate":true}');
    expect(runs).toBe(answers.length - 1);
  });

  it('keeps the raw body, svc headers without the signature, the attempts, the first failure and the last error scrubbed of the secret', async () => {
    const board = parkingBoard({ parkAfterMs: 10 * MINUTE });
    board.webhook.on('task.created', () => {
      throw new Error(`cannot reach the API with ${secret}`);
    });
    const event = boardEvent('task.created', { task: { title: 'Zürich ✓' } });
    const answers = await retryUntil(board, event, HOUR);
    const parked = await board.webhook.parked.get(event.id);
    expect(parked).toMatchObject({
      id: event.id,
      webhook: 'board',
      kind: 'task.created',
      reason: 'failing',
      parkedAt: START + answers.at(-1)!.at,
      firstFailedAt: START,
      attempts: answers.length - 1,
    });
    expect(Buffer.from(parked!.body).toString('utf8')).toBe(JSON.stringify(event));
    expect(parked!.headers['x-svc-delivery']).toBe(event.id);
    expect(parked!.headers['x-svc-event']).toBe('task.created');
    expect(Object.keys(parked!.headers)).not.toContain('x-svc-signature');
    expect(parked!.lastError).toContain('cannot reach the API with');
    expect(parked!.lastError).not.toContain(secret);
    // One error line per parked delivery, naming it and how to replay it; the secret in no line.
    const lines = board.logs.lines.filter((l) => l.msg.startsWith('parked a delivery'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, deliveryId: event.id, reason: 'failing' });
    expect(JSON.stringify(board.logs.lines)).not.toContain(secret);
  });

  it('counts a handler that outlives its deadline as a failure', async () => {
    const board = parkingBoard({ parkAfterMs: 10 * MINUTE, timeoutMs: 50, leaseMs: 200, abandonAfterMs: 100 });
    board.webhook.on('task.created', () => new Promise(() => undefined));
    const event = boardEvent('task.created');
    expect((await board.webhook.receive(attempt(board, event))).status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 250)); // the run is abandoned, its claim released
    board.clock.now += 11 * MINUTE;
    expect((await board.webhook.receive(attempt(board, event))).body).toBe('{"ok":true,"parked":true}');
    expect(await board.webhook.parked.get(event.id)).toMatchObject({ attempts: 1, firstFailedAt: START });
  });

  it('does not park a delivery that succeeded on a retry, nor one that never failed', async () => {
    const board = parkingBoard({ parkAfterMs: 10 * MINUTE });
    let fail = true;
    board.webhook.on('task.created', () => {
      if (fail) throw new Error('not yet');
    });
    const event = boardEvent('task.created');
    expect((await board.webhook.receive(attempt(board, event))).status).toBe(500);
    fail = false;
    board.clock.now += 5 * MINUTE;
    expect((await board.webhook.receive(attempt(board, event))).body).toBe('{"ok":true}');
    const fresh = boardEvent('task.created');
    board.clock.now += 30 * MINUTE;
    expect((await board.webhook.receive(attempt(board, fresh))).body).toBe('{"ok":true}');
    expect(await board.webhook.parked.list()).toEqual([]);
  });

  it('never parks with parkAfterMs false: svc keeps its retries', async () => {
    const board = parkingBoard({ parkAfterMs: false });
    board.webhook.on('task.created', () => {
      throw new Error('broken');
    });
    const answers = await retryUntil(board, boardEvent('task.created'), 23 * HOUR);
    expect(answers.every((a) => a.status === 500)).toBe(true);
    expect(await board.webhook.parked.list()).toEqual([]);
  });

  it('runs the handlers as before, with an error line, when the lot is full (maxParked)', async () => {
    const board = parkingBoard({ parkAfterMs: 10 * MINUTE }, { maxParked: 1 });
    let runs = 0;
    board.webhook.on('task.created', () => {
      runs++;
      throw new Error('broken');
    });
    const [a, b] = [boardEvent('task.created'), boardEvent('task.created')];
    await board.webhook.receive(attempt(board, a));
    await board.webhook.receive(attempt(board, b));
    board.clock.now += 11 * MINUTE;
    expect((await board.webhook.receive(attempt(board, a))).body).toBe('{"ok":true,"parked":true}');
    const answer = await board.webhook.receive(attempt(board, b));
    expect([answer.status, codeOf(answer.body), runs]).toEqual([500, 'handler_failed', 3]);
    expect(board.logs.lines.some((l) => l.level === 50 && l.msg.startsWith('the parking lot is full') && l.deliveryId === b.id)).toBe(true);
    expect((await board.webhook.parked.list()).map((p) => p.id)).toEqual([a.id]);
  });

  it('answers 503 with the claim released when the lot cannot be read, so svc retries and nothing is lost', async () => {
    let broken = true;
    const lot = memoryStore().parking;
    const store = storeWithLot({
      failure: (id: string) => {
        if (broken) throw new Error('lot down');
        return lot.failure(id);
      },
    });
    const board = parkingBoard({ store });
    let runs = 0;
    board.webhook.on('task.created', () => void runs++);
    const event = boardEvent('task.created');
    const refused = await board.webhook.receive(attempt(board, event));
    expect([refused.status, codeOf(refused.body), runs]).toEqual([503, 'store_unavailable', 0]);
    broken = false;
    // Released: the retry claims it at once and runs the handler.
    expect((await board.webhook.receive(attempt(board, event))).body).toBe('{"ok":true}');
    expect(runs).toBe(1);
  });
});

describe('replaying a parked delivery', () => {
  async function parkedOne(handler: () => void) {
    const board = parkingBoard({ parkAfterMs: 10 * MINUTE });
    let broken = true;
    board.webhook.on('task.created', () => {
      if (broken) throw new Error('broken');
      handler();
    });
    const event = boardEvent('task.created');
    await retryUntil(board, event, HOUR);
    broken = false;
    return { board, event, breakAgain: () => void (broken = true), fix: () => void (broken = false) };
  }

  it('runs it once through the handlers once fixed; a second replay is a duplicate', async () => {
    let runs = 0;
    const { board, event } = await parkedOne(() => void runs++);
    board.clock.now += HOUR;
    expect(await board.webhook.parked.replay(event.id)).toEqual({ id: event.id, outcome: 'handled', verifiedAtParkTime: true });
    expect(runs).toBe(1);
    expect(await board.webhook.parked.replay(event.id)).toEqual({ id: event.id, outcome: 'duplicate', verifiedAtParkTime: true });
    expect(runs).toBe(1);
    expect(await board.webhook.parked.get(event.id)).toMatchObject({ replayedAt: board.clock.now });
    expect(board.records.at(-2)).toMatchObject({ outcome: 'handled', deliveryId: event.id });
    expect(board.records.at(-1)).toMatchObject({ outcome: 'duplicate', deliveryId: event.id });
  });

  it('keeps a replay that fails parked, its attempts counted and its last error replaced', async () => {
    const { board, event } = await parkedOne(() => {
      throw new Error('still broken, differently');
    });
    const before = (await board.webhook.parked.get(event.id))!;
    await expect(board.webhook.parked.replay(event.id)).rejects.toMatchObject({ code: 'handler_failed', status: 500 });
    const after = await board.webhook.parked.get(event.id);
    expect(after).toMatchObject({ attempts: before.attempts + 1, lastError: 'still broken, differently' });
    expect(after).not.toHaveProperty('replayedAt');
  });

  it('replays a delivery parked under a secret the webhook no longer has, as verified at park time', async () => {
    const { board, event } = await parkedOne(() => undefined);
    let runs = 0;
    // The same store, after a rotation to a new secret: the parked delivery's signature is not kept, so it is not checked again.
    const rotated = svcBoardWebhook({ secret: 'rotated-secret-0123456789abcdef', store: board.store, logger: false }).on('task.created', () => void runs++);
    expect(await rotated.parked.replay(event.id)).toEqual({ id: event.id, outcome: 'handled', verifiedAtParkTime: true });
    expect(runs).toBe(1);
  });

  it('answers 503 and keeps nothing when the lot cannot park, so svc retries', async () => {
    const store = storeWithLot({
      park: () => Promise.reject(new Error('lot down')),
    });
    const board = parkingBoard({ store, parkAfterMs: 10 * MINUTE });
    board.webhook.on('task.created', () => {
      throw new Error('broken');
    });
    const event = boardEvent('task.created');
    await board.webhook.receive(attempt(board, event));
    board.clock.now += 11 * MINUTE;
    const refused = await board.webhook.receive(attempt(board, event));
    expect([refused.status, codeOf(refused.body)]).toEqual([503, 'store_unavailable']);
    // The claim was released, not committed: the next attempt is no duplicate.
    expect((await board.webhook.receive(attempt(board, event))).status).toBe(503);
  });

  it('rejects a replay of an id that is not parked with not_parked (404)', async () => {
    const board = parkingBoard();
    await expect(board.webhook.parked.replay('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'not_parked', status: 404 });
  });

  it('replays every waiting one with replayAll, and drops one for good', async () => {
    let runs = 0;
    const { board, event, breakAgain, fix } = await parkedOne(() => void runs++);
    const other = boardEvent('task.created');
    breakAgain();
    await retryUntil(board, other, HOUR);
    fix();
    expect(await board.webhook.parked.drop(other.id)).toBe(true);
    expect(await board.webhook.parked.drop(other.id)).toBe(false);
    expect(await board.webhook.parked.replayAll()).toEqual([{ id: event.id, outcome: 'handled', verifiedAtParkTime: true }]);
    expect(await board.webhook.parked.replayAll()).toEqual([]);
    expect(runs).toBe(1);
  });

  it('replays over HTTP a request signed with the current secret and naming the parked id in X-Svc-Webhooks-Replay', async () => {
    let runs = 0;
    const { board, event } = await parkedOne(() => void runs++);
    const request = attempt(board, event);
    const replay = { ...request, headers: { ...request.headers, 'X-Svc-Webhooks-Replay': event.id } };
    expect((await board.webhook.receive(replay)).body).toBe('{"ok":true,"replayed":true}');
    expect((await board.webhook.receive(replay)).body).toBe('{"ok":true,"duplicate":true}');
    expect(runs).toBe(1);
    // Without the header it is svc's attempt: a duplicate of the parked delivery.
    expect((await board.webhook.receive(request)).body).toBe('{"ok":true,"duplicate":true}');
    const mismatched = { ...request, headers: { ...request.headers, 'X-Svc-Webhooks-Replay': '00000000-0000-4000-8000-000000000000' } };
    expect(codeOf((await board.webhook.receive(mismatched)).body)).toBe('delivery_id_mismatch');
  });

  it('answers 404 not_parked to a replay request for a delivery that is not parked, and runs nothing', async () => {
    const board = parkingBoard();
    let runs = 0;
    board.webhook.on('task.created', () => void runs++);
    const event = boardEvent('task.created');
    const request = attempt(board, event);
    const answer = await board.webhook.receive({ ...request, headers: { ...request.headers, 'X-Svc-Webhooks-Replay': event.id } });
    expect([answer.status, codeOf(answer.body), runs]).toEqual([404, 'not_parked', 0]);
  });

  it('refuses a forged replay request before looking at the lot', async () => {
    const { board, event } = await parkedOne(() => undefined);
    const forged = signBoardEvent(event, { secret: 'another-secret-0123456789abcdef', timestamp: Math.floor(board.clock.now / 1000) });
    const answer = await board.webhook.receive({ body: forged.body, headers: { ...forged.headers, 'X-Svc-Webhooks-Replay': event.id } });
    expect([answer.status, codeOf(answer.body)]).toEqual([401, 'signature_mismatch']);
    expect((await board.webhook.parked.get(event.id))!.replayedAt).toBeUndefined();
  });
});

describe("schemaPolicy: 'park'", () => {
  it('parks an authentic delivery that fails the schema at once (200), and svc retries are duplicates', async () => {
    const board = parkingBoard({ schemaPolicy: 'park' });
    let runs = 0;
    board.webhook.on('task.created', () => void runs++);
    const event = boardEvent('task.created');
    const broken = { ...event, task: { ...event.task, title: 42 } };
    const answer = await board.webhook.receive(attempt(board, broken));
    expect([answer.status, answer.body, runs]).toEqual([200, '{"ok":true,"parked":true}', 0]);
    expect(await board.webhook.parked.get(broken.id)).toMatchObject({ reason: 'schema', attempts: 0 });
    expect(await board.webhook.parked.get(broken.id)).not.toHaveProperty('firstFailedAt');
    expect((await board.webhook.parked.get(broken.id))!.lastError).toMatch(/schema/);
    expect((await board.webhook.receive(attempt(board, broken))).body).toBe('{"ok":true,"duplicate":true}');
    expect(board.records[0]).toMatchObject({ outcome: 'parked' });
  });

  it('still refuses 400 what names no delivery, and a forgery 401', async () => {
    const board = parkingBoard({ schemaPolicy: 'park' });
    const answer = await board.webhook.receive(attempt(board, { hello: 'world' }));
    expect([answer.status, codeOf(answer.body)]).toEqual([400, 'schema_violation']);
    const forged = signBoardEvent(boardEvent('task.created'), { secret: 'another-secret-0123456789abcdef', timestamp: Math.floor(START / 1000) });
    expect((await board.webhook.receive({ body: forged.body, headers: forged.headers })).status).toBe(401);
    expect(await board.webhook.parked.list()).toEqual([]);
  });

  it('is a setup error with a store that has no parking lot', () => {
    const store: DeliveryStore = { claim: () => ({ state: 'claimed', token: 't' }), commit: () => undefined, release: () => undefined };
    expect(() => svcBoardWebhook({ secret, store, schemaPolicy: 'park' })).toThrow(/schemaPolicy: 'park'. needs a store with a parking lot/);
  });
});

describe('the bot webhook parks too', () => {
  it('parks a failing bot update and replays it checked as at park time, however old it is now', async () => {
    const clock = { now: Date.now() };
    const store = memoryStore({ now: () => clock.now });
    let broken = true;
    let runs = 0;
    const bot = svcBotWebhook({ secret, store, now: () => clock.now, parkAfterMs: 10 * MINUTE, logger: false }).on('messageCreate', () => {
      if (broken) throw new Error('broken');
      runs++;
    });
    const update = botCommand('/deploy');
    const send = () => {
      const signed = signBotUpdate(update, { secret });
      return bot.receive({ body: signed.body, headers: signed.headers, url: '/webhooks/bot' });
    };
    expect((await send()).status).toBe(500);
    clock.now += 11 * MINUTE;
    expect((await send()).body).toBe('{"ok":true,"parked":true}');
    broken = false;
    clock.now += 3 * 24 * HOUR;
    expect(await bot.parked.replay(update.id)).toMatchObject({ outcome: 'handled' });
    expect(runs).toBe(1);
  });
});

describe('webhook.parked without a lot', () => {
  it('rejects every call, saying the store has none', async () => {
    const store: DeliveryStore = { claim: () => ({ state: 'claimed', token: 't' }), commit: () => undefined, release: () => undefined };
    const board = svcBoardWebhook({ secret, store, logger: false });
    await expect(board.parked.list()).rejects.toThrow(/has no parking lot/);
    await expect(board.parked.replay('x')).rejects.toThrow(/has no parking lot/);
  });
});

describe('the parkAfterMs option', () => {
  it.each([0, -1, 24 * HOUR, Number.NaN, '20h', true])('refuses %p, naming the option', (value) => {
    expect(() => svcBoardWebhook({ secret, parkAfterMs: value as never })).toThrow(/`parkAfterMs` must be false or a number of milliseconds/);
  });
});

describe('parking, at its edges', () => {
  it('parks an attempt exactly parkAfterMs after the first failure, not one a millisecond sooner', async () => {
    const board = parkingBoard({ parkAfterMs: 10 * MINUTE });
    board.webhook.on('task.created', () => {
      throw new Error('broken');
    });
    const event = boardEvent('task.created');
    await board.webhook.receive(attempt(board, event));
    board.clock.now = START + 10 * MINUTE - 1000; // a second sooner (timestamps are whole seconds)
    expect((await board.webhook.receive(attempt(board, event))).status).toBe(500);
    board.clock.now = START + 10 * MINUTE;
    expect((await board.webhook.receive(attempt(board, event))).body).toBe('{"ok":true,"parked":true}');
  });

  it('notes no failure with parkAfterMs false, and parks nothing another webhook noted', async () => {
    const shared = parkingBoard({ parkAfterMs: 10 * MINUTE });
    shared.webhook.on('task.created', () => {
      throw new Error('broken');
    });
    const event = boardEvent('task.created');
    await shared.webhook.receive(attempt(shared, event));
    const off = parkingBoard({ parkAfterMs: false, store: shared.store });
    off.clock.now = shared.clock.now;
    off.webhook.on('task.created', () => {
      throw new Error('broken');
    });
    const other = boardEvent('task.created');
    await off.webhook.receive(attempt(off, other));
    expect(await shared.store.parking!.failure(other.id)).toBeUndefined();
    off.clock.now += HOUR;
    expect((await off.webhook.receive(attempt(off, event))).status).toBe(500);
    expect(await shared.webhook.parked.list()).toEqual([]);
  });

  it('keeps at most 2,000 characters of the last error', async () => {
    const board = parkingBoard({ parkAfterMs: 10 * MINUTE });
    board.webhook.on('task.created', () => {
      throw new Error('x'.repeat(5000));
    });
    const event = boardEvent('task.created');
    await retryUntil(board, event, HOUR);
    expect((await board.webhook.parked.get(event.id))!.lastError).toHaveLength(2000);
  });

  it("scrubs the verifying board's own secret (a resolver's) from the kept error", async () => {
    const boardSecret = 'resolved-board-secret-0123456789abc';
    const board = parkingBoard({ secret: () => boardSecret, parkAfterMs: 10 * MINUTE } as Partial<BoardWebhookOptions>);
    board.webhook.on('task.created', () => {
      throw new Error(`refused with ${boardSecret} and ${secret}`);
    });
    const event = boardEvent('task.created');
    const send = async () => {
      const signed = signBoardEvent(event, { secret: boardSecret, timestamp: Math.floor(board.clock.now / 1000) });
      return board.webhook.receive({ body: signed.body, headers: signed.headers });
    };
    expect((await send()).status).toBe(500);
    board.clock.now += 11 * MINUTE;
    expect((await send()).body).toBe('{"ok":true,"parked":true}');
    const { lastError } = (await board.webhook.parked.get(event.id))!;
    expect(lastError).toContain('refused with');
    expect(lastError).not.toContain(boardSecret);
  });

  it('logs a lot that cannot note a failure, and still answers the failure as before', async () => {
    const store = storeWithLot({
      noteFailure: () => {
        throw new Error('lot down');
      },
    });
    const board = parkingBoard({ store });
    board.webhook.on('task.created', () => {
      throw new Error('broken');
    });
    const answer = await board.webhook.receive(attempt(board, boardEvent('task.created')));
    expect([answer.status, codeOf(answer.body)]).toEqual([500, 'handler_failed']);
    expect(board.logs.lines.some((l) => l.level === 50 && l.msg.startsWith('could not note a failed delivery'))).toBe(true);
  });

  it('keeps only the headers svc sent: a bot update has no event or timestamp header to keep', async () => {
    const clock = { now: Date.now() };
    const store = memoryStore({ now: () => clock.now });
    const bot = svcBotWebhook({ secret, store, now: () => clock.now, parkAfterMs: 10 * MINUTE, logger: false }).on('messageCreate', () => {
      throw new Error('broken');
    });
    const update = botCommand('/deploy');
    const send = () => {
      const signed = signBotUpdate(update, { secret });
      return bot.receive({ body: signed.body, headers: signed.headers, url: '/webhooks/bot' });
    };
    await send();
    clock.now += 11 * MINUTE;
    expect((await send()).body).toBe('{"ok":true,"parked":true}');
    const parked = (await bot.parked.get(update.id))!;
    expect(Object.keys(parked.headers).sort()).toEqual(['content-type', 'user-agent', 'x-svc-delivery']);
  });

  it('refuses a schema violation 400 under the default policy, parking nothing', async () => {
    const board = parkingBoard();
    const event = boardEvent('task.created');
    const answer = await board.webhook.receive(attempt(board, { ...event, task: { ...event.task, title: 42 } }));
    expect([answer.status, codeOf(answer.body)]).toEqual([400, 'schema_violation']);
    expect(await board.webhook.parked.list()).toEqual([]);
  });

  it('refuses a schema violation 400 when the lot is full, and 503 when it cannot park', async () => {
    const full = parkingBoard({ schemaPolicy: 'park' }, { maxParked: 1 });
    const broken = () => {
      const event = boardEvent('task.created');
      return { ...event, task: { ...event.task, title: 42 } };
    };
    expect((await full.webhook.receive(attempt(full, broken()))).status).toBe(200);
    const refused = await full.webhook.receive(attempt(full, broken()));
    expect([refused.status, codeOf(refused.body)]).toEqual([400, 'schema_violation']);
    const store = storeWithLot({ park: () => Promise.reject(new Error('lot down')) });
    const down = parkingBoard({ schemaPolicy: 'park', store });
    const answer = await down.webhook.receive(attempt(down, broken()));
    expect([answer.status, codeOf(answer.body)]).toEqual([503, 'store_unavailable']);
  });

  it('does not ignore a schema violation it parks, even from the ignored bot', async () => {
    const self = '5b6c7d8e-0000-4000-8000-00000000000a';
    const board = parkingBoard({ schemaPolicy: 'park', ignore: { self } });
    const event = boardEvent('task.created');
    const answer = await board.webhook.receive(attempt(board, { ...event, actor: { id: self, is_bot: true, name: 'me' }, task: { ...event.task, title: 42 } }));
    expect(answer.body).toBe('{"ok":true,"parked":true}');
  });
});

describe('replaying, at its edges', () => {
  async function parkedMany(count: number, handler: (ctx: { request?: Request | undefined; timestamp: number }) => unknown = () => undefined) {
    const board = parkingBoard({ parkAfterMs: 10 * MINUTE });
    let broken = true;
    board.webhook.on('task.created', (_event, ctx) => {
      if (broken) throw new Error('broken');
      return handler(ctx);
    });
    const events = Array.from({ length: count }, () => boardEvent('task.created'));
    for (const event of events) {
      board.clock.now = START;
      await retryUntil(board, event, HOUR);
    }
    broken = false;
    return { board, events };
  }

  it('replays every parked delivery under its own claim: two of them both run', async () => {
    let runs = 0;
    const { board } = await parkedMany(2, () => void runs++);
    expect((await board.webhook.parked.replayAll()).map((r) => 'outcome' in r && r.outcome)).toEqual(['handled', 'handled']);
    expect(runs).toBe(2);
  });

  it('gives the handlers the parked request: its headers, and the timestamp svc signed', async () => {
    const seen: Array<{ event: string | null; timestamp: number }> = [];
    const { board, events } = await parkedMany(1, (ctx) => void seen.push({ event: ctx.request!.headers.get('x-svc-event'), timestamp: ctx.timestamp }));
    const parked = (await board.webhook.parked.get(events[0]!.id))!;
    await board.webhook.parked.replay(events[0]!.id);
    expect(seen).toEqual([{ event: 'task.created', timestamp: Number(parked.headers['x-svc-timestamp']) }]);
  });

  it('answers a second replay while the first still runs 409, and lets close() wait for the first', async () => {
    let release!: () => void;
    const { board, events } = await parkedMany(1, () => new Promise<void>((resolve) => (release = resolve)));
    const first = board.webhook.parked.replay(events[0]!.id);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(board.webhook.parked.replay(events[0]!.id)).rejects.toMatchObject({ code: 'delivery_in_progress', status: 409 });
    let closed = false;
    const closing = board.webhook.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    release();
    await expect(first).resolves.toMatchObject({ outcome: 'handled' });
    await closing;
    expect(closed).toBe(true);
  });

  it('treats a parked record that says it was replayed as a duplicate, running nothing', async () => {
    let runs = 0;
    const { board, events } = await parkedMany(1, () => void runs++);
    const parked = (await board.webhook.parked.get(events[0]!.id))!;
    await board.store.parking!.park({ ...parked, replayedAt: board.clock.now });
    expect(await board.webhook.parked.replay(events[0]!.id)).toMatchObject({ outcome: 'duplicate' });
    expect(runs).toBe(0);
  });

  it('takes the replay header in any case, and answers it 404 on a store without a lot', async () => {
    let runs = 0;
    const { board, events } = await parkedMany(1, () => void runs++);
    const request = attempt(board, events[0]!);
    const upper = await board.webhook.receive({ ...request, headers: { ...request.headers, 'X-Svc-Webhooks-Replay': ` ${events[0]!.id.toUpperCase()} ` } });
    expect([upper.body, runs]).toEqual(['{"ok":true,"replayed":true}', 1]);
    const store: DeliveryStore = { claim: () => ({ state: 'claimed', token: 't' }), commit: () => undefined, release: () => undefined };
    const bare = svcBoardWebhook({ secret, store, logger: false, now: () => board.clock.now });
    const answer = await bare.receive({ ...request, headers: { ...request.headers, 'X-Svc-Webhooks-Replay': events[0]!.id } });
    expect([answer.status, codeOf(answer.body)]).toEqual([404, 'not_parked']);
  });
});
