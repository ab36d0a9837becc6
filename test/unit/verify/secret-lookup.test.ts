import pino from 'pino';
import { pathId, pathPattern, requestPathname } from '../../../src/internal/request/path-pattern';
import { bodyBoardId, scannedBoardId } from '../../../src/verify/claimed-board';
import { FAILURE_LOG_INTERVAL_MS, MAX_FAILURE_LINES, SecretLookup, type SecretAnswer } from '../../../src/verify/secret-resolver';
import { secretLookupSettings } from '../../../src/verify/secret-lookup-options';
import { redactingLogOptions } from '../../../src/internal/logging/log-redaction';
import { codeOf } from '../../support/refusal';

const silent = pino({ level: 'silent' });
const SECRET = 'a-secret-of-sixteen-or-more';

function lookupWith(resolve: (id: string) => SecretAnswer | PromiseLike<SecretAnswer>, options = {}) {
  const calls: string[] = [];
  const lookup = new SecretLookup({
    resolve: (id) => {
      calls.push(id);
      return resolve(id);
    },
    webhook: 'board',
    options: secretLookupSettings(options),
    logger: silent,
  });
  return { lookup, calls };
}

describe('SecretLookup', () => {
  it('answers a cached board synchronously, without asking again', async () => {
    const { lookup, calls } = lookupWith(() => SECRET);
    await lookup.keysFor('a');
    const again = lookup.keysFor('a');
    expect(Array.isArray(again)).toBe(true);
    expect(calls).toEqual(['a']);
  });

  it('keeps unknown boards apart: a flood of made-up ids does not push out a known board', async () => {
    const { lookup, calls } = lookupWith((id) => (id === 'known' ? SECRET : undefined), { maxIds: 10 });
    await lookup.keysFor('known');
    for (let i = 0; i < 2_000; i++) expect(await codeOf(() => lookup.keysFor(`forged-${i}`))).toBe('unknown_board');
    await lookup.keysFor('known');
    expect(calls.filter((id) => id === 'known')).toHaveLength(1);
  });

  it('after a lookup timed out, the next delivery asks afresh (once failureTtlMs has passed); the hung answer arriving later does no harm', async () => {
    let release: (value: string) => void = () => undefined;
    let hang = true;
    const { lookup, calls } = lookupWith(() => (hang ? new Promise<string>((resolve) => (release = resolve)) : SECRET), { timeoutMs: 50, failureTtlMs: 0 });
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    hang = false;
    await lookup.keysFor('a');
    release(SECRET);
    await new Promise((r) => setTimeout(r, 10));
    expect(calls).toEqual(['a', 'a']);
  });

  it('an answer on its way when forget() is called is not cached', async () => {
    let release: (value: string) => void = () => undefined;
    const { lookup, calls } = lookupWith(() => new Promise<string>((resolve) => (release = resolve)));
    const first = lookup.keysFor('a');
    lookup.forget('a');
    release(SECRET);
    await first;
    const second = lookup.keysFor('a');
    expect(Array.isArray(second)).toBe(false);
    release(SECRET);
    await second;
    expect(calls).toEqual(['a', 'a']);
  });

  it.each([
    ['a number', () => 42 as unknown as string],
    ['a list holding a short secret', () => [SECRET, 'short']],
    [
      'a synchronous throw',
      () => {
        throw new Error('no');
      },
    ],
    [
      'a rejection with a hostile value',
      () =>
        Promise.reject(
          new Proxy(
            {},
            {
              get: () => {
                throw new Error('trap');
              },
            },
          ),
        ),
    ],
  ])('answers secret_unavailable for %s', async (_what, resolve) => {
    const { lookup } = lookupWith(resolve as () => SecretAnswer);
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
  });

  it('treats undefined, null and an empty list as an unknown board', async () => {
    for (const answer of [undefined, null, []]) {
      const { lookup } = lookupWith(() => answer as SecretAnswer);
      expect(await codeOf(() => lookup.keysFor('a'))).toBe('unknown_board');
    }
  });
});

describe('pathPattern', () => {
  const boards = pathPattern('/hooks/:boardId/svc/', ['boardId']);

  it('matches one segment, decoded, between the fixed parts', () => {
    expect(boards.path).toBe('/hooks/:boardId/svc');
    expect(boards.match('/hooks/88f7b448/svc')).toBe('88f7b448');
    expect(boards.match('/hooks/a%20b/svc')).toBe('a b');
  });

  it('matches nothing else: another path, an empty or slashed id, bad escapes, an overlong id', () => {
    for (const path of ['/hooks//svc', '/hooks/a/b/svc', '/hooks/%E0%A4%A/svc', `/hooks/${'x'.repeat(201)}/svc`, '/hooks/a/other', '/elsewhere']) {
      expect(boards.match(path)).toBeUndefined();
    }
  });

  it('takes only the parameter names of its webhook, once', () => {
    expect(() => pathPattern('/hooks/:botId', ['boardId'])).toThrow(TypeError);
    expect(() => pathPattern('/hooks/:boardId/:boardId', ['boardId'])).toThrow(TypeError);
    expect(() => pathPattern('/hooks/x:boardId', ['boardId'])).toThrow(TypeError);
  });
});

describe('scannedBoardId (the claimed board, read without parsing)', () => {
  it.each([
    ['{"id":"1","board":{"id":"A"}}', 'A'],
    ['{"x":{"board":{"id":"B"}},"board":{"id":"A"}}', 'A'],
    ['{"x":"\\"board\\":{\\"id\\":\\"B\\"}","board":{"id":"A"}}', 'A'],
    ['{"x":["board",{"board":{"id":"B"}}],"board":{"id":"A"}}', 'A'],
    // The first "board" starts at an escaped quote, inside a string: passed over, the scan goes on.
    ['{"x":"\\"board","board":{"id":"A"}}', 'A'],
    ['{ "board" : { "id" : "A" } }', 'A'],
    ['{"board":{"key":"K","id":"A"}}', undefined],
    // Only the top-level key's own object counts, not a "board" further on inside it.
    ['{"board":{"key":"K","x":{"board":{"id":"B"}}}}', undefined],
    ['{"board_id":"B"}', undefined],
    ['["board",{"id":"B"}]', undefined],
  ])('%s -> %s', (text, expected) => {
    expect(scannedBoardId(Buffer.from(text))).toBe(expected);
  });
});

describe('SecretLookup when the resolver throws', () => {
  /** A lookup whose log lines are kept as objects; its logger serialises `err` as the library's does. */
  function logged(resolve: (id: string) => SecretAnswer | PromiseLike<SecretAnswer>, what: 'board' | 'bot' = 'board', options = {}) {
    const lines: Record<string, unknown>[] = [];
    const root = pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const logger = root.child({}, redactingLogOptions([]));
    return { lookup: new SecretLookup({ resolve, webhook: what, options: secretLookupSettings(options), logger }), lines };
  }

  it('logs what was thrown with every known secret dropped from its message and stack', async () => {
    const { lookup, lines } = logged((id) => {
      if (id === 'known') return SECRET;
      throw new Error(`the vault refused: its last answer was ${SECRET}`);
    });
    await lookup.keysFor('known');
    expect(await codeOf(() => lookup.keysFor('broken'))).toBe('secret_unavailable');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      boardId: 'broken',
      code: 'secret_unavailable',
      err: { type: 'Error', message: 'the vault refused: its last answer was [Redacted]' },
    });
    expect(JSON.stringify(lines[0])).not.toContain(SECRET);
    expect((lines[0]!.err as { stack: string }).stack).toContain('[Redacted]');
  });

  it('logs a thrown value that is no Error by its class and text', async () => {
    const { lookup, lines } = logged(() => {
      throw Object.assign(Object.create(null) as object, { message: 'plain' });
    });
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    expect(lines[0]!.err).toEqual({ type: 'Object', message: 'plain', stack: 'Object: plain' });
  });

  it('logs no thrown value for a resolver that was too slow or answered something that is not a secret', async () => {
    const slow = logged(() => new Promise<string>(() => undefined), 'bot', { timeoutMs: 20 });
    expect(await codeOf(() => slow.lookup.keysFor('b1'))).toBe('secret_unavailable');
    const invalid = logged(() => 'short');
    expect(await codeOf(() => invalid.lookup.keysFor('a'))).toBe('secret_unavailable');
    expect(slow.lines).toEqual([expect.objectContaining({ botId: 'b1', code: 'secret_unavailable' })]);
    expect(invalid.lines).toEqual([expect.objectContaining({ boardId: 'a', code: 'secret_unavailable' })]);
    expect('err' in slow.lines[0]! || 'err' in invalid.lines[0]!).toBe(false);
  });

  it('knows no secrets of an id it never looked up', () => {
    expect(logged(() => SECRET).lookup.secretsOf('never')).toEqual([]);
  });
});

describe('requestPathname (the path a request was posted to)', () => {
  it('is the mounted original URL, else the URL, without query or trailing slash; empty without either', () => {
    expect(requestPathname({ originalUrl: '/hooks/b1/svc/?x=1', url: '/svc' })).toBe('/hooks/b1/svc');
    expect(requestPathname({ url: '/svc?x=1' })).toBe('/svc');
    expect(requestPathname({})).toBe('');
  });
});

describe('the id in a path', () => {
  const boards = pathPattern('/hooks/:boardId/svc', ['boardId']);
  const CJK = encodeURIComponent('漢'); // 9 characters for one

  it('may be 200 characters long, not more', () => {
    expect(boards.match(`/hooks/${'x'.repeat(200)}/svc`)).toBe('x'.repeat(200));
    expect(boards.match(`/hooks/${'x'.repeat(201)}/svc`)).toBeUndefined();
  });

  it('is not decoded from more than 600 characters, however short it would decode', () => {
    expect(boards.match(`/hooks/${CJK.repeat(66)}abcdef/svc`)).toBe(`${'漢'.repeat(66)}abcdef`);
    expect(boards.match(`/hooks/${CJK.repeat(66)}abcdefg/svc`)).toBeUndefined();
  });

  it('is the route parameter Express parsed when the URL does not match, if it is a usable id', () => {
    const req = (params?: Record<string, unknown>) => ({ originalUrl: '/elsewhere', ...(params === undefined ? {} : { params }) });
    expect(pathId(boards, req({ boardId: 'b1' }))).toBe('b1');
    expect(pathId(boards, req({ boardId: 'x'.repeat(200) }))).toBe('x'.repeat(200));
    for (const boardId of ['', 'x'.repeat(201), 7, undefined]) expect(pathId(boards, req({ boardId }))).toBeUndefined();
    expect(pathId(boards, req())).toBeUndefined();
    expect(pathId(boards, { originalUrl: '/hooks/b2/svc', params: { boardId: 'b1' } })).toBe('b2');
  });

  it('is none for a path without a parameter', () => {
    expect(pathId(pathPattern('/svc', ['boardId']), { originalUrl: '/svc', params: { boardId: 'b1' } })).toBeUndefined();
  });
});

describe('bodyBoardId (the claimed board, from a whole parse of the unverified body)', () => {
  it.each([
    ['{"board":{"id":"A"}}', 'A'],
    [`{"board":{"id":"${'b'.repeat(200)}"}}`, 'b'.repeat(200)],
    [`{"board":{"id":"${'b'.repeat(201)}"}}`, undefined],
    ['{"board":{"id":""}}', undefined],
    ['{"board":{"id":7}}', undefined],
    ['{"board":{"id":["A"]}}', undefined],
    ['{"board":{"id":{"length":1}}}', undefined],
    ['{"board":{}}', undefined],
    ['{"board":null}', undefined],
    ['{"board":"A"}', undefined],
    ['null', undefined],
    ['"A"', undefined],
    ['{"board":', undefined],
  ])('%s -> %p', (text, expected) => {
    expect(bodyBoardId(Buffer.from(text))).toBe(expected);
  });
});

describe('SecretLookup on a clock', () => {
  it("keeps a known board's secrets for the ttl, and asks again once it has passed", async () => {
    let now = 0;
    const calls: string[] = [];
    const resolve = (id: string) => {
      calls.push(id);
      return SECRET;
    };
    const lookup = new SecretLookup({ resolve, webhook: 'board', options: secretLookupSettings({ ttlMs: 1000 }), logger: silent, now: () => now });
    await lookup.keysFor('a');
    now = 999;
    await lookup.keysFor('a');
    expect(calls).toEqual(['a']);
    now = 1000;
    await lookup.keysFor('a');
    expect(calls).toEqual(['a', 'a']);
  });

  it('keeps "unknown" for the unknownTtl, and asks again once it has passed', async () => {
    let now = 0;
    const calls: string[] = [];
    const resolve = (id: string) => {
      calls.push(id);
      return undefined;
    };
    const lookup = new SecretLookup({ resolve, webhook: 'board', options: secretLookupSettings({ unknownTtlMs: 500 }), logger: silent, now: () => now });
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('unknown_board');
    expect(lookup.secretsOf('a')).toEqual([]);
    now = 499;
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('unknown_board');
    expect(calls).toEqual(['a']);
    now = 500;
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('unknown_board');
    expect(calls).toEqual(['a', 'a']);
  });
});

describe('SecretLookup when the resolver fails', () => {
  /** A lookup on a clock whose resolver throws while `state.failing`; it counts calls and keeps log lines. */
  function failingLookup(options = {}) {
    const state = { now: 1_000_000, failing: true };
    const calls: string[] = [];
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const resolve = (id: string): SecretAnswer => {
      calls.push(id);
      if (state.failing) throw new Error('the vault is down');
      return SECRET;
    };
    const lookup = new SecretLookup({ resolve, webhook: 'board', options: secretLookupSettings(options), logger, now: () => state.now });
    return { lookup, calls, lines, state };
  }

  it('remembers a failure for failureTtlMs (default 5 s): deliveries meanwhile are answered 503 at once, without asking', async () => {
    const { lookup, calls, state } = failingLookup();
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    state.failing = false;
    state.now += 4_999;
    // Synchronously, as a cached answer is: no promise, no lookup.
    expect(() => lookup.keysFor('a')).toThrow(expect.objectContaining({ code: 'secret_unavailable', retryAfter: 5 }));
    expect(calls).toEqual(['a']);
    state.now += 1;
    await lookup.keysFor('a');
    expect(calls).toEqual(['a', 'a']);
  });

  it('remembers each id apart, and forgets a failure on forget()', async () => {
    const { lookup, calls, state } = failingLookup();
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    state.failing = false;
    await lookup.keysFor('b');
    lookup.forget('a');
    await lookup.keysFor('a');
    expect(calls).toEqual(['a', 'b', 'a']);
  });

  it('does not remember the failure of a lookup that set out before forget()', async () => {
    const calls: string[] = [];
    let fail: () => void = () => undefined;
    const lookup = new SecretLookup({
      resolve: (id) => {
        calls.push(id);
        return calls.length === 1 ? new Promise<SecretAnswer>((_, reject) => (fail = () => reject(new Error('down')))) : SECRET;
      },
      webhook: 'board',
      options: secretLookupSettings({}),
      logger: silent,
    });
    const first = codeOf(() => lookup.keysFor('a'));
    lookup.forget('a'); // the board was connected meanwhile
    fail();
    expect(await first).toBe('secret_unavailable');
    await lookup.keysFor('a');
    expect(calls).toEqual(['a', 'a']);
  });

  it('says unknown_bot for a bot the resolver does not know', async () => {
    const lookup = new SecretLookup({ resolve: () => undefined, webhook: 'bot', options: secretLookupSettings({}), logger: silent });
    expect(await codeOf(() => lookup.keysFor('b'))).toBe('unknown_bot');
  });

  it('remembers nothing with failureTtlMs 0', async () => {
    const { lookup, calls } = failingLookup({ failureTtlMs: 0 });
    for (let i = 0; i < 3; i++) expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    expect(calls).toEqual(['a', 'a', 'a']);
  });

  it('shares one failing lookup among concurrent deliveries for one id', async () => {
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const slow = new SecretLookup({
      resolve: (id) => {
        calls.push(id);
        return new Promise<SecretAnswer>((_, reject) => (release = () => reject(new Error('down'))));
      },
      webhook: 'board',
      options: secretLookupSettings({}),
      logger: silent,
    });
    const waiting = Array.from({ length: 50 }, () => codeOf(() => slow.keysFor('a')));
    release();
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(['secret_unavailable']));
    expect(calls).toEqual(['a']);
  });

  it('logs a failure of one id at most once a minute, and the next line counts the failed lookups in between', async () => {
    const { lookup, calls, lines, state } = failingLookup({ failureTtlMs: 1_000 });
    const start = state.now;
    for (let at = start; at < start + 60_000; at += 1_000) {
      state.now = at;
      expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    }
    expect(calls).toHaveLength(60);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ boardId: 'a', code: 'secret_unavailable' });
    expect(lines[0]!.repeated).toBeUndefined();
    state.now = start + 60_000;
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ boardId: 'a', code: 'secret_unavailable', repeated: 59 });
    // Another board's failure is its own line.
    expect(await codeOf(() => lookup.keysFor('b'))).toBe('secret_unavailable');
    expect(lines.map((l) => l.boardId)).toEqual(['a', 'a', 'b']);
    // A minute later with no failure in between: a line with nothing to count.
    state.now = start + 120_000;
    expect(await codeOf(() => lookup.keysFor('a'))).toBe('secret_unavailable');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatchObject({ boardId: 'a' });
    expect('repeated' in lines[3]!).toBe(false);
  });

  it('keeps at most 1,000 failed ids, however many distinct ids fail', async () => {
    const { lookup, calls, lines } = failingLookup();
    for (let i = 0; i < 1_001; i++) expect(await codeOf(() => lookup.keysFor(`id-${i}`))).toBe('secret_unavailable');
    expect(lines).toHaveLength(MAX_FAILURE_LINES);
    // The oldest was dropped: asked again; the newest is still remembered.
    expect(await codeOf(() => lookup.keysFor('id-0'))).toBe('secret_unavailable');
    expect(await codeOf(() => lookup.keysFor('id-1000'))).toBe('secret_unavailable');
    expect(await codeOf(() => lookup.keysFor('id-2'))).toBe('secret_unavailable');
    expect(calls.filter((id) => id === 'id-0')).toHaveLength(2);
    expect(calls.filter((id) => id === 'id-1000')).toHaveLength(1);
    expect(calls.filter((id) => id === 'id-2')).toHaveLength(1);
  });
});

describe('SecretLookup under requests that each claim a fresh id (anyone can send them)', () => {
  it('writes at most MAX_FAILURE_LINES failure lines a minute over all ids; the next line counts the others as `dropped`', async () => {
    const state = { now: 1_000_000 };
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const lookup = new SecretLookup({
      resolve: () => {
        throw new Error('the vault is down');
      },
      webhook: 'board',
      options: secretLookupSettings({}),
      logger,
      now: () => state.now,
    });
    for (let i = 0; i < 600; i++) expect(await codeOf(() => lookup.keysFor(`fresh-${i}`))).toBe('secret_unavailable');
    expect(lines).toHaveLength(MAX_FAILURE_LINES);
    state.now += FAILURE_LOG_INTERVAL_MS;
    expect(await codeOf(() => lookup.keysFor('fresh-600'))).toBe('secret_unavailable');
    expect(lines).toHaveLength(MAX_FAILURE_LINES + 1);
    expect(lines.at(-1)).toMatchObject({ boardId: 'fresh-600', dropped: 600 - MAX_FAILURE_LINES });
  });

  it('keeps at most `maxLookups` lookups in flight over all ids: one more is answered 503 at once, without asking', async () => {
    const hung: Array<() => void> = [];
    const { lookup, calls } = lookupWith(() => new Promise<string>((resolve) => hung.push(() => resolve(SECRET))), { maxLookups: 3 });
    const pending = ['a', 'b', 'c'].map((id) => lookup.keysFor(id));
    expect(() => lookup.keysFor('d')).toThrow(expect.objectContaining({ code: 'secret_unavailable' }));
    // A delivery for an id already being looked up shares that lookup.
    expect(lookup.keysFor('a')).toBeInstanceOf(Promise);
    expect(calls).toEqual(['a', 'b', 'c']);
    for (const release of hung) release();
    await Promise.all(pending);
    await new Promise((r) => setTimeout(r, 0));
    const d = lookup.keysFor('d');
    hung[3]!();
    await d;
    expect(calls).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('SecretLookup keeps', () => {
  it("every secret of an answer, for the handlers' loggers to drop", async () => {
    const other = 'another-secret-of-sixteen';
    const { lookup } = lookupWith((id) => (id === 'two' ? [SECRET, other] : SECRET));
    await lookup.keysFor('two');
    await lookup.keysFor('one');
    expect(lookup.secretsOf('two')).toEqual([SECRET, other]);
    expect(lookup.secretsOf('one')).toEqual([SECRET]);
  });

  it('as many known boards as `maxIds`, dropping the oldest answer first', async () => {
    const { lookup, calls } = lookupWith(() => SECRET, { maxIds: 2 });
    await lookup.keysFor('a');
    await lookup.keysFor('b');
    await lookup.keysFor('a');
    expect(calls).toEqual(['a', 'b']);
    await lookup.keysFor('c');
    await lookup.keysFor('b');
    await lookup.keysFor('a');
    expect(calls).toEqual(['a', 'b', 'c', 'a']);
  });

  it('one lookup at a time per id: one that set out before a forget() does not end the newer one', async () => {
    const answers: ((value: string) => void)[] = [];
    const { lookup, calls } = lookupWith(() => new Promise<string>((resolve) => answers.push(resolve)));
    const first = lookup.keysFor('a');
    lookup.forget('a');
    const second = lookup.keysFor('a');
    answers[0]!(SECRET);
    await first;
    const third = lookup.keysFor('a');
    expect(calls).toEqual(['a', 'a']);
    answers[1]!(SECRET);
    await Promise.all([second, third]);
  });
});
