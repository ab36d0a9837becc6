import { SvcDedupObject, SWEEP_INTERVAL_MS } from '../../../src/dedup/durable-object-claims';
import { ObjectStorage } from '../../support/object-storage';

/**
 * The Durable Object behind `durableObjectStore()`: what each command does to a delivery id's
 * record, as the Redis store's scripts do, and the alarm that deletes expired records.
 */
describe('SvcDedupObject', () => {
  let now = 1_000_000;
  let storage: ObjectStorage;
  let object: SvcDedupObject;
  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    storage = new ObjectStorage();
    object = new SvcDedupObject({ storage });
  });
  afterEach(() => jest.restoreAllMocks());

  const send = async (body: unknown) => {
    const res = await object.fetch(new Request('https://svc-dedup/', { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) }));
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const claim = (id: string, token: string, ms = 1000) => send({ op: 'claim', id, token, ms }).then((r) => r.body.state);
  const commit = (id: string, token: string, ms = 60_000) => send({ op: 'commit', id, token, ms }).then((r) => r.body.ok);
  const release = (id: string, token: string) => send({ op: 'release', id, token }).then((r) => r.body.ok);
  const extend = (id: string, token: string, ms: number) => send({ op: 'extend', id, token, ms }).then((r) => r.body.ok);

  describe('claim', () => {
    it('claims an id nobody holds; a second claim while the lease holds is busy', async () => {
      expect(await claim('d1', 'a')).toBe('claimed');
      expect(await claim('d1', 'b')).toBe('busy');
      expect(storage.records.get('d1')).toEqual({ v: 'claim:a', until: now + 1000 });
    });

    it('claims it again once the lease has ended, to the exact millisecond', async () => {
      await claim('d1', 'a', 1000);
      now += 999;
      expect(await claim('d1', 'b')).toBe('busy');
      now += 1;
      expect(await claim('d1', 'b')).toBe('claimed');
    });

    it('answers done for a committed id until the retention ends, then claims it', async () => {
      await claim('d1', 'a');
      await commit('d1', 'a', 60_000);
      expect(await claim('d1', 'b')).toBe('done');
      now += 60_000;
      expect(await claim('d1', 'b')).toBe('claimed');
    });

    it('keeps ids apart', async () => {
      await claim('d1', 'a');
      expect(await claim('d2', 'a')).toBe('claimed');
    });
  });

  describe('commit', () => {
    it('records the claim as done for the retention', async () => {
      await claim('d1', 'a');
      expect(await commit('d1', 'a', 5000)).toBe(true);
      expect(storage.records.get('d1')).toEqual({ v: 'done', until: now + 5000 });
    });

    it('writes done when the record is gone (its lease lapsed): the handlers did succeed', async () => {
      await claim('d1', 'a', 1000);
      now += 2000;
      expect(await commit('d1', 'a')).toBe(true);
      expect(await claim('d1', 'b')).toBe('done');
    });

    it('does not take over a claim another attempt holds now', async () => {
      await claim('d1', 'a', 1000);
      now += 1000;
      await claim('d1', 'b', 1000);
      expect(await commit('d1', 'a')).toBe(false);
      expect(storage.records.get('d1')).toEqual({ v: 'claim:b', until: now + 1000 });
    });

    it('of an id done already: succeeds and leaves its retention as it was', async () => {
      await claim('d1', 'a');
      await commit('d1', 'a', 5000);
      now += 100;
      expect(await commit('d1', 'a', 5000)).toBe(true);
      expect(storage.records.get('d1')).toEqual({ v: 'done', until: now - 100 + 5000 });
    });
  });

  describe('release', () => {
    it('forgets our claim, so a retry claims it', async () => {
      await claim('d1', 'a');
      expect(await release('d1', 'a')).toBe(true);
      expect(storage.records.has('d1')).toBe(false);
      expect(await claim('d1', 'b')).toBe('claimed');
    });

    it('leaves a claim that is not ours, and a done record', async () => {
      await claim('d1', 'a');
      expect(await release('d1', 'b')).toBe(false);
      expect(await claim('d1', 'c')).toBe('busy');
      await commit('d1', 'a');
      expect(await release('d1', 'a')).toBe(false);
      expect(await claim('d1', 'c')).toBe('done');
    });
  });

  describe('extend', () => {
    it('renews our lease from now', async () => {
      await claim('d1', 'a', 1000);
      now += 800;
      expect(await extend('d1', 'a', 1000)).toBe(true);
      now += 900;
      expect(await claim('d1', 'b')).toBe('busy');
      now += 100;
      expect(await claim('d1', 'b')).toBe('claimed');
    });

    it('does not renew a claim that is not ours, or one that lapsed', async () => {
      await claim('d1', 'a', 1000);
      expect(await extend('d1', 'b', 5000)).toBe(false);
      now += 1000;
      expect(await extend('d1', 'a', 5000)).toBe(false);
      expect(await claim('d1', 'c')).toBe('claimed');
    });
  });

  describe('the alarm', () => {
    it('is set for the first record kept, and left as it is by later ones: the sweep sets the next', async () => {
      await claim('d1', 'a', 5000);
      expect(storage.alarmAt).toBe(now + 5000);
      await claim('d2', 'a', 1000);
      await commit('d1', 'a', 9000);
      expect(storage.alarmAt).toBe(now + 5000);
    });

    it('deletes the expired records, keeps the others, and is set again for the next to expire, an hour from now at the soonest', async () => {
      await claim('d1', 'a', 1000);
      await claim('d2', 'a', 3000);
      await claim('d3', 'a', 3000);
      await commit('d3', 'a', 2000);
      await claim('d4', 'a', 3 * SWEEP_INTERVAL_MS);
      now += 2000;
      await object.alarm();
      expect([...storage.records.keys()]).toEqual(['d2', 'd4']);
      expect(storage.alarmAt).toBe(now + SWEEP_INTERVAL_MS);
      await release('d2', 'a');
      now += SWEEP_INTERVAL_MS;
      await object.alarm();
      expect([...storage.records.keys()]).toEqual(['d4']);
      // The next to expire, d4, is later than an interval from now.
      expect(storage.alarmAt).toBe(1_000_000 + 3 * SWEEP_INTERVAL_MS);
    });

    it('sweeps past one batch of records', async () => {
      for (let i = 0; i < 1203; i++) await claim(`d${String(i).padStart(4, '0')}`, 'a', i < 1200 ? 1000 : 5000);
      now += 1000;
      await object.alarm();
      expect([...storage.records.keys()]).toEqual(['d1200', 'd1201', 'd1202']);
      expect(storage.alarmAt).toBe(now + SWEEP_INTERVAL_MS);
    });

    it('with nothing left, sets no new alarm', async () => {
      await claim('d1', 'a', 1000);
      storage.alarmAt = null;
      now += 1000;
      await object.alarm();
      expect(storage.records.size).toBe(0);
      expect(storage.alarmAt).toBeNull();
    });
  });

  describe('a request that is not a command of the store', () => {
    it.each([
      ['not JSON', '{'],
      ['not an object', '[]'],
      ['an unknown op', { op: 'delete', id: 'd1', token: 'a', ms: 1 }],
      ['no id', { op: 'claim', token: 'a', ms: 1 }],
      ['an empty id', { op: 'claim', id: '', token: 'a', ms: 1 }],
      ['an id over 512 characters', { op: 'claim', id: 'x'.repeat(513), token: 'a', ms: 1 }],
      ['an id that is a number', { op: 'claim', id: 7, token: 'a', ms: 1 }],
      ['no token', { op: 'claim', id: 'd1', ms: 1 }],
      ['an empty token', { op: 'commit', id: 'd1', token: '', ms: 1 }],
      ['no ms', { op: 'claim', id: 'd1', token: 'a' }],
      ['ms of 0', { op: 'extend', id: 'd1', token: 'a', ms: 0 }],
      ['ms that is not finite (1e309 parses as Infinity)', '{"op":"commit","id":"d1","token":"a","ms":1e309}'],
      ['ms as text', { op: 'claim', id: 'd1', token: 'a', ms: '1000' }],
    ])('%s: 400, nothing written', async (_name, body) => {
      const answer = await send(body);
      expect(answer.status).toBe(400);
      expect(typeof answer.body.error).toBe('string');
      expect(storage.writes).toBe(0);
    });

    it('takes an id of exactly 512 characters, and a release without ms', async () => {
      expect(await claim('x'.repeat(512), 'a')).toBe('claimed');
      expect(await release('x'.repeat(512), 'a')).toBe(true);
    });
  });
});
