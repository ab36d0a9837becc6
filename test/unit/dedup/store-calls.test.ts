import type { Logger } from 'pino';
import { SvcWebhookError, type DeliveryStore } from '../../../src';
import { attempt, claimDelivery, commitWithRetry, releaseClaim } from '../../../src/dedup/claim';

const failure = new Error('connection refused');

function store(overrides: Partial<DeliveryStore>): DeliveryStore {
  return { claim: () => ({ state: 'claimed', token: 't' }), commit: () => undefined, release: () => undefined, ...overrides };
}

/** A logger that keeps what `error` was given. */
function errorLog() {
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  const logger = { error: (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message }) } as unknown as Logger;
  return { logger, lines };
}

function expectUnavailable(err: unknown): void {
  expect(err).toBeInstanceOf(SvcWebhookError);
  const refused = err as SvcWebhookError;
  expect([refused.code, refused.status, refused.retryAfter, refused.cause]).toEqual(['store_unavailable', 503, 5, failure]);
}

describe('claiming a delivery in the store', () => {
  it('answers as the store did, synchronously when the store answered so', async () => {
    expect(claimDelivery(store({}), 'a', 1000)).toEqual({ state: 'claimed', token: 't' });
    await expect(claimDelivery(store({ claim: async () => ({ state: 'done' }) }), 'a', 1000)).resolves.toEqual({ state: 'done' });
  });

  it("fails closed when the store throws: store_unavailable (503, retry after 5 s), the store's error as cause", () => {
    const throwing = store({
      claim: () => {
        throw failure;
      },
    });
    let caught: unknown;
    try {
      claimDelivery(throwing, 'a', 1000);
    } catch (err) {
      caught = err;
    }
    expectUnavailable(caught);
  });

  it('fails closed the same way when the store rejects', async () => {
    const rejecting = store({ claim: () => Promise.reject(failure) });
    expectUnavailable(await (claimDelivery(rejecting, 'a', 1000) as Promise<unknown>).catch((err: unknown) => err));
  });
});

describe('releasing the claim of a failed delivery', () => {
  it('logs, and does not throw, when the store cannot release it', async () => {
    const { logger, lines } = errorLog();
    const release = releaseClaim({
      store: store({
        release: () => {
          throw failure;
        },
      }),
      id: 'a',
      token: 't',
      logger,
    });
    expect(release).toBeUndefined();
    await releaseClaim({ store: store({ release: () => Promise.reject(failure) }), id: 'b', token: 't', logger });
    expect(lines.map((l) => l.fields.deliveryId)).toEqual(['a', 'b']);
    expect(lines[0]!.fields.err).toMatchObject({ message: 'connection refused' });
    expect(lines[1]!.fields.err).toMatchObject({ message: 'connection refused' });
  });

  it('logs nothing when the store released it', async () => {
    const { logger, lines } = errorLog();
    releaseClaim({ store: store({}), id: 'a', token: 't', logger });
    await releaseClaim({ store: store({ release: async () => undefined }), id: 'b', token: 't', logger });
    expect(lines).toEqual([]);
  });
});

describe('committing a handled delivery', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  /** A store whose commit fails `failures` times, recording when each commit was tried. */
  function flakyStore(failures: number) {
    const triedAt: number[] = [];
    return {
      triedAt,
      store: store({
        commit: () => {
          triedAt.push(performance.now());
          if (triedAt.length <= failures) throw failure;
        },
      }),
    };
  }

  it('is done at once when the first commit succeeded', async () => {
    const { logger, lines } = errorLog();
    await expect(commitWithRetry({ store: store({}), id: 'a', token: 't', logger }, performance.now() + 1000, undefined)).resolves.toBe(true);
    expect(lines).toEqual([]);
  });

  it('retries a failed commit after 50 ms, doubling the wait up to 2 s, until it is recorded', async () => {
    const { logger, lines } = errorLog();
    const { store: flaky, triedAt } = flakyStore(7);
    const start = performance.now();
    const done = commitWithRetry({ store: flaky, id: 'a', token: 't', logger }, start + 60_000, { error: failure });
    await jest.advanceTimersByTimeAsync(60_000);
    await expect(done).resolves.toBe(true);
    expect(triedAt.map((t) => t - start)).toEqual([50, 150, 350, 750, 1550, 3150, 5150, 7150]);
    expect(lines).toEqual([]);
  });

  it('gives up when the lease ends, logging that a repeat would run the handlers again', async () => {
    const { logger, lines } = errorLog();
    const { store: failing, triedAt } = flakyStore(Number.POSITIVE_INFINITY);
    const start = performance.now();
    const done = commitWithRetry({ store: failing, id: 'a', token: 't', logger }, start + 300, { error: failure });
    await jest.advanceTimersByTimeAsync(1000);
    await expect(done).resolves.toBe(false);
    // 50, 150, then the last wait is cut to what is left of the lease (300).
    expect(triedAt.map((t) => t - start)).toEqual([50, 150, 300]);
    expect(lines.map((l) => l.fields.deliveryId)).toEqual(['a']);
  });
});

describe('one store call, its failure reported as a value', () => {
  it('answers synchronously when the store answered synchronously: undefined on success, the error on a throw', () => {
    expect(attempt(() => 'OK')).toBeUndefined();
    expect(attempt(() => undefined)).toBeUndefined();
    const thrown = new Error('down');
    expect(
      attempt(() => {
        throw thrown;
      }),
    ).toEqual({ error: thrown });
  });

  it('answers with a promise when the store did: undefined on success, the rejection as a value', async () => {
    const ok = attempt(() => Promise.resolve('OK'));
    expect(ok).toBeInstanceOf(Promise);
    await expect(ok).resolves.toBeUndefined();
    await expect(attempt(() => Promise.reject(undefined))).resolves.toEqual({ error: undefined });
  });
});
