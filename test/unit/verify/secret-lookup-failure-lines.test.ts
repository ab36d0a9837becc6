import pino from 'pino';
import { FAILURE_LOG_INTERVAL_MS, MAX_FAILURE_LINES, SecretLookup } from '../../../src/verify/secret-resolver';
import { secretLookupSettings } from '../../../src/verify/secret-lookup-options';
import { codeOf } from '../../support/refusal';

/** A lookup on a clock whose resolver always throws; it keeps the log lines. */
function failingLookup() {
  const state = { now: 1_000_000 };
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const lookup = new SecretLookup({
    resolve: () => {
      throw new Error('the vault is down');
    },
    webhook: 'board',
    options: secretLookupSettings({ failureTtlMs: 1_000 }),
    logger,
    now: () => state.now,
  });
  return { lookup, lines, state };
}

describe("the secret resolver's failure lines", () => {
  it('carry no `dropped` count while no failure went unlogged', async () => {
    const { lookup, lines } = failingLookup();
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    expect(await codeOf(() => lookup.keysFor('b'))).toBe('secret_unavailable');
    expect(lines.map((l) => l.boardId)).toEqual(['a', 'b']);
    expect(lines.map((l) => 'dropped' in l)).toEqual([false, false]);
  });

  it("count a failure of an id that the overall limit kept from a line on that id's next line", async () => {
    const { lookup, lines, state } = failingLookup();
    const start = state.now;
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    // A minute later, fresh ids use up the lines of the new interval before `a` fails again.
    state.now = start + FAILURE_LOG_INTERVAL_MS;
    for (let i = 0; i < MAX_FAILURE_LINES; i++) expect(await codeOf(() => lookup.keysFor(`fresh-${i}`))).toBe('secret_unavailable');
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    expect(lines).toHaveLength(1 + MAX_FAILURE_LINES);
    state.now = start + 2 * FAILURE_LOG_INTERVAL_MS;
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    expect(lines).toHaveLength(2 + MAX_FAILURE_LINES);
    expect(lines.at(-1)).toMatchObject({ boardId: 'a', code: 'secret_unavailable', repeated: 1, dropped: 1 });
  });
});
