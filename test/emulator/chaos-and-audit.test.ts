import { createFakeSvc, FakeSvcError, type ChaosOptions, type FakeSvc } from '../../src/testing';
import { BOARD_SECRET, startReceiver, type TestReceiver } from './receiver';

async function run(chaos: ChaosOptions, events: number): Promise<{ svc: FakeSvc; receiver: TestReceiver; ids: string[] }> {
  const receiver = await startReceiver();
  const svc = await createFakeSvc({ clock: 'manual', allowLoopback: true, chaos });
  await fetch(`${svc.baseUrl}/api/boards/${svc.board.id}/webhook`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${svc.person.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.boardUrl, secret: BOARD_SECRET }),
  });
  const ids = Array.from({ length: events }, () => svc.emitBoardEvent({ type: 'task.updated' }).id);
  await svc.advance(0);
  return { svc, receiver, ids };
}

const opened: Array<{ svc: FakeSvc; receiver: TestReceiver }> = [];
async function tracked(chaos: ChaosOptions, events: number) {
  const started = await run(chaos, events);
  opened.push(started);
  return started;
}
afterEach(async () => {
  for (const { svc, receiver } of opened.splice(0)) {
    await svc.close();
    await receiver.close();
  }
});

function arrivals(receiver: TestReceiver): string[] {
  return receiver.requests.map((r) => String(r.headers['x-svc-delivery']));
}

describe('chaos', () => {
  it('should be off by default: one attempt per event, in the order emitted', async () => {
    const { svc, receiver, ids } = await tracked({}, 20);
    expect(arrivals(receiver)).toEqual(ids);
    expect(svc.audit.attempts().every((a) => a.copy === 'original')).toBe(true);
  });

  describe('with a reorder window of 5', () => {
    it('should shuffle deliveries ready at once, none further than 4 places, the same way for the same seed', async () => {
      const a = await tracked({ seed: 7, reorderWindow: 5 }, 40);
      const b = await tracked({ seed: 7, reorderWindow: 5 }, 40);
      const c = await tracked({ seed: 8, reorderWindow: 5 }, 40);
      const positions = (run: typeof a) => arrivals(run.receiver).map((id) => run.ids.indexOf(id));
      expect(positions(a)).not.toEqual([...positions(a)].sort((x, y) => x - y));
      expect(positions(a).every((from, to) => Math.abs(from - to) <= 4)).toBe(true);
      expect(positions(b)).toEqual(positions(a));
      expect(positions(c)).not.toEqual(positions(a));
    });
  });

  describe('with a duplicate rate', () => {
    it('should send about that fraction again after a 2xx, which the receiver answers as repeats', async () => {
      const { svc, receiver, ids } = await tracked({ seed: 3, duplicateRate: 0.3 }, 100);
      const duplicates = svc.audit.attempts().filter((a) => a.copy === 'duplicate');
      expect(duplicates.length).toBeGreaterThan(15);
      expect(duplicates.length).toBeLessThan(45);
      expect(duplicates.every((d) => d.ok)).toBe(true);
      expect(receiver.requests).toHaveLength(100 + duplicates.length);
      expect(receiver.board.map((e) => e.id)).toEqual(ids);
      svc.audit.assertNoneHandledTwice(receiver.board.map((e) => e.id));
    });
  });

  describe('with a concurrent copy rate of 1', () => {
    it('should send two copies of every attempt at the same time, handled once by the receiver', async () => {
      const { svc, receiver } = await tracked({ concurrentCopyRate: 1 }, 10);
      expect(svc.audit.attempts().filter((a) => a.copy === 'concurrent')).toHaveLength(10);
      expect(receiver.requests).toHaveLength(20);
      svc.audit.assertNoneHandledTwice(receiver.board.map((e) => e.id));
      svc.audit.assertAllDelivered();
    });
  });

  describe('with a drop rate of 1', () => {
    it('should cut every connection mid-body, so nothing is handled and every delivery stays pending', async () => {
      const { svc, receiver } = await tracked({ dropRate: 1 }, 3);
      expect(receiver.board).toEqual([]);
      expect(svc.audit.attempts().map((a) => a.error)).toEqual(Array(3).fill('connection dropped before the body was sent'));
      expect(svc.webhook({ boardId: svc.board.id })).toMatchObject({ pending: 3, lastError: 'connection dropped before the body was sent' });
    });
  });

  describe('with a slow rate of 1', () => {
    it('should pause mid-body, and still deliver within the 10 s window', async () => {
      const started = Date.now();
      const { svc, receiver } = await tracked({ slowRate: 1, slowMs: 300 }, 2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(600);
      expect(receiver.board).toHaveLength(2);
      svc.audit.assertAllDelivered();
    });
  });
});

describe('the audit', () => {
  function failure(fn: () => void): FakeSvcError {
    try {
      fn();
    } catch (err) {
      return err as FakeSvcError;
    }
    throw new Error('expected the assertion to fail');
  }

  it('should catch a delivery handled twice, and an id it never sent', async () => {
    const { svc, ids } = await tracked({}, 3);
    svc.audit.assertNoneHandledTwice(ids);
    const twice = failure(() => svc.audit.assertNoneHandledTwice([ids[0]!, ids[1]!, ids[0]!]));
    expect(twice).toBeInstanceOf(FakeSvcError);
    expect(twice.code).toBe('audit_failed');
    expect(twice.message).toContain(`${ids[0]} handled 2 times`);
    expect(failure(() => svc.audit.assertNoneHandledTwice(['not-sent'])).code).toBe('audit_failed');
  });

  it('should catch a break of the board order', async () => {
    const { svc } = await tracked({}, 0);
    svc.audit.assertBoardOrder([1, 2, 5, 9]);
    const broken = failure(() => svc.audit.assertBoardOrder([1, 3, 2, 4]));
    expect(broken.code).toBe('audit_failed');
    expect(broken.message).toContain('sequence 2 handled after 3');
    expect(failure(() => svc.audit.assertBoardOrder([1, 1])).code).toBe('audit_failed');
  });

  it('should catch a delivery that was never answered 2xx', async () => {
    const { svc, receiver, ids } = await tracked({}, 2);
    svc.audit.assertAllDelivered();
    receiver.answer({ status: 500 });
    svc.emitBoardEvent({ type: 'task.created' });
    await svc.advance(0);
    const missing = failure(() => svc.audit.assertAllDelivered());
    expect(missing.code).toBe('audit_failed');
    expect(missing.message).toContain('1 of 3 deliveries');
    expect(
      svc.audit
        .deliveries()
        .map((d) => d.id)
        .slice(0, 2),
    ).toEqual(ids);
  });

  it('should keep only the latest maxAuditEntries deliveries and attempts', async () => {
    const svc = await createFakeSvc({ clock: 'manual', maxAuditEntries: 3 });
    try {
      const ids = Array.from({ length: 5 }, () => svc.emitBotUpdate({ kind: 'messageCreate' }).id);
      expect(svc.audit.deliveries()).toEqual([]); // no bot webhook: nothing queued
      await fetch(`${svc.baseUrl}/api/bots/me/webhook`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${svc.bot.token}` },
        body: JSON.stringify({ url: 'https://bot.example.com/hook', secret: 'a-bot-secret-of-enough-length' }),
      });
      const queued = Array.from({ length: 5 }, () => svc.emitBotUpdate({ kind: 'messageCreate' }).id);
      await svc.advance(0);
      expect(svc.audit.deliveries().map((d) => d.id)).toEqual(queued.slice(2));
      expect(svc.audit.attempts().map((a) => a.deliveryId)).toEqual(queued.slice(2));
      expect(ids).toHaveLength(5);
    } finally {
      await svc.close();
    }
  });
});
