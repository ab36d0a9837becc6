import pino from 'pino';
import { isSvcWebhookError } from '../../../src';
import { SecretLookup, type SecretAnswer } from '../../../src/verify/secret-resolver';
import { secretLookupSettings } from '../../../src/verify/secret-lookup-options';

const SECRET = 'a-secret-of-sixteen-or-more';

function lookupWith(resolve: () => SecretAnswer | PromiseLike<SecretAnswer>, options = {}) {
  return new SecretLookup({ resolve, webhook: 'board', options: secretLookupSettings(options), logger: pino({ level: 'silent' }) });
}

/** Runs `work` where setTimeout gives a number, as in browsers and workerd (timers without `unref`). */
async function withNumericTimers<T>(work: () => Promise<T>): Promise<T> {
  const real = setTimeout;
  const spy = jest.spyOn(global, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => Number(real(fn, ms))) as unknown as typeof setTimeout);
  try {
    return await work();
  } finally {
    spy.mockRestore();
  }
}

describe('SecretLookup on a runtime whose timers are plain numbers', () => {
  it("looks a board's secret up and caches it", async () => {
    const keys = await withNumericTimers(async () => {
      const lookup = lookupWith(() => SECRET);
      const found = await lookup.keysFor('a');
      expect(lookup.secretsOf('a')).toEqual([SECRET]);
      return found;
    });
    expect(keys).toHaveLength(1);
  });

  it('still gives up on a resolver that does not answer within timeoutMs: 503 secret_unavailable', async () => {
    const code = await withNumericTimers(() =>
      Promise.resolve(lookupWith(() => new Promise<SecretAnswer>(() => undefined), { timeoutMs: 20 }).keysFor('a')).then(
        () => undefined,
        (err: unknown) => (isSvcWebhookError(err) ? err.code : 'not an SvcWebhookError'),
      ),
    );
    expect(code).toBe('secret_unavailable');
  });
});
