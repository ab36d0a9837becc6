import { DueQueue } from '../../src/watch/due-queue';
import { PollSchedule, type NextPoll } from '../../src/watch/poll-schedule';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('DueQueue', () => {
  it('gives keys in due order, each once; a rescheduled key keeps its latest time only', () => {
    const q = new DueQueue();
    for (const [key, due] of [
      ['c', 30],
      ['a', 10],
      ['d', 40],
      ['b', 20],
    ] as const)
      q.schedule(key, due);
    q.schedule('d', 5);
    expect(q.takeDue(0)).toBeUndefined();
    expect([q.takeDue(100), q.takeDue(100), q.takeDue(100), q.takeDue(100), q.takeDue(100)]).toEqual(['d', 'a', 'b', 'c', undefined]);
    expect(q.size).toBe(0);
  });

  it('a removed key never comes back, even when scheduled again later', () => {
    const q = new DueQueue();
    q.schedule('a', 10);
    q.remove('a');
    q.schedule('a', 50);
    expect(q.takeDue(20)).toBeUndefined();
    expect(q.nextDue()).toBe(50);
    expect(q.takeDue(50)).toBe('a');
  });

  it('keeps order over many random schedules', () => {
    const q = new DueQueue();
    const dues = Array.from({ length: 2_000 }, (_, i) => [`k${i}`, Math.floor(Math.random() * 10_000)] as const);
    for (const [k, d] of dues) q.schedule(k, d);
    const out: number[] = [];
    for (let key = q.takeDue(1e9); key !== undefined; key = q.takeDue(1e9)) out.push(dues[Number(key.slice(1))]![1]);
    expect(out).toEqual([...out].sort((a, b) => a - b));
    expect(out).toHaveLength(2_000);
  });
});

describe('PollSchedule', () => {
  let schedule: PollSchedule | undefined;
  afterEach(() => schedule?.close());

  function counting(options: { maxInFlight: number; maxRequestsPerSecond: number; takesMs?: number; next?: (key: string) => NextPoll | undefined }) {
    const starts: Array<{ key: string; at: number }> = [];
    let running = 0;
    let most = 0;
    const inFlight = new Set<string>();
    let overlaps = 0;
    schedule = new PollSchedule({
      maxInFlight: options.maxInFlight,
      maxRequestsPerSecond: options.maxRequestsPerSecond,
      run: async (key) => {
        starts.push({ key, at: performance.now() });
        running++;
        most = Math.max(most, running);
        if (inFlight.has(key)) overlaps++;
        inFlight.add(key);
        await sleep(options.takesMs ?? 0);
        inFlight.delete(key);
        running--;
        return options.next ? options.next(key) : { inMs: 60_000, polled: true };
      },
    });
    return { starts, most: () => most, overlaps: () => overlaps, running: () => running };
  }

  it('never more than maxInFlight at once', async () => {
    const c = counting({ maxInFlight: 3, maxRequestsPerSecond: 10_000, takesMs: 20 });
    for (let i = 0; i < 20; i++) schedule!.add(`k${i}`);
    await schedule!.checked();
    expect(c.most()).toBe(3);
    expect(c.starts).toHaveLength(20);
  });

  it('a key is never polled twice at once, even when due again at once', async () => {
    const c = counting({ maxInFlight: 8, maxRequestsPerSecond: 10_000, takesMs: 5, next: () => ({ inMs: 0, polled: true }) });
    schedule!.add('a');
    schedule!.add('b');
    await sleep(200);
    expect(c.starts.length).toBeGreaterThan(10);
    expect(c.overlaps()).toBe(0);
  });

  it('never more than maxRequestsPerSecond started in a second', async () => {
    const c = counting({ maxInFlight: 100, maxRequestsPerSecond: 40 });
    for (let i = 0; i < 1_000; i++) schedule!.add(`k${i}`);
    await sleep(1_000);
    expect(c.starts.length).toBeGreaterThanOrEqual(20);
    expect(c.starts.length).toBeLessThanOrEqual(41);
  });

  it('pauseFor: nothing starts before the pause ends', async () => {
    const c = counting({ maxInFlight: 4, maxRequestsPerSecond: 1_000 });
    schedule!.pauseFor(300);
    const from = performance.now();
    schedule!.add('a');
    await schedule!.checked();
    expect(c.starts[0]!.at - from).toBeGreaterThanOrEqual(295);
  });

  it('checked() waits for a key whose poll told nothing (a 429), resolving when one does', async () => {
    let tries = 0;
    counting({ maxInFlight: 1, maxRequestsPerSecond: 1_000, next: () => ({ inMs: 30, polled: ++tries >= 3 }) });
    schedule!.add('a');
    await schedule!.checked();
    expect(tries).toBe(3);
  });

  it('a removed key is polled no more, also when removed while in flight', async () => {
    const c = counting({ maxInFlight: 2, maxRequestsPerSecond: 1_000, takesMs: 30, next: () => ({ inMs: 10, polled: true }) });
    schedule!.add('a');
    schedule!.add('b');
    await sleep(10);
    schedule!.remove('a');
    await sleep(200);
    expect(c.starts.filter((s) => s.key === 'a')).toHaveLength(1);
    expect(c.starts.filter((s) => s.key === 'b').length).toBeGreaterThan(2);
  });

  it('close() waits for the polls in flight and starts no more', async () => {
    const c = counting({ maxInFlight: 2, maxRequestsPerSecond: 1_000, takesMs: 50, next: () => ({ inMs: 1, polled: true }) });
    schedule!.add('a');
    while (c.starts.length === 0) await sleep(1);
    expect(c.running()).toBe(1);
    await schedule!.close();
    // Resolved only once the poll in flight had ended, however loaded the machine.
    expect(c.running()).toBe(0);
    const count = c.starts.length;
    await sleep(50);
    expect(c.starts).toHaveLength(count);
  });
});
