import pino from 'pino';
import { isSvcWebhookError } from '../../src';
import { pathPattern } from '../../src/internal/path-pattern';
import { scannedBoardId } from '../../src/verify/claimed-board';
import { SecretLookup, type SecretAnswer } from '../../src/verify/secret-resolver';

const silent = pino({ level: 'silent' });
const SECRET = 'a-secret-of-sixteen-or-more';

function lookupWith(resolve: (id: string) => SecretAnswer | PromiseLike<SecretAnswer>, options = {}) {
  const calls: string[] = [];
  const lookup = new SecretLookup(
    (id) => {
      calls.push(id);
      return resolve(id);
    },
    'board',
    options,
    silent,
  );
  return { lookup, calls };
}

async function codeOf(work: () => unknown): Promise<string | undefined> {
  try {
    await work();
    return undefined;
  } catch (err) {
    return isSvcWebhookError(err) ? err.code : `not an SvcWebhookError: ${String(err)}`;
  }
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
    const { lookup, calls } = lookupWith((id) => (id === 'known' ? SECRET : undefined), { max: 10 });
    await lookup.keysFor('known');
    for (let i = 0; i < 2_000; i++) expect(await codeOf(() => lookup.keysFor(`forged-${i}`))).toBe('unknown_board');
    await lookup.keysFor('known');
    expect(calls.filter((id) => id === 'known')).toHaveLength(1);
  });

  it('after a lookup timed out, the next delivery asks afresh; the hung answer arriving later does no harm', async () => {
    let release: (value: string) => void = () => undefined;
    let hang = true;
    const { lookup, calls } = lookupWith(() => (hang ? new Promise<string>((resolve) => (release = resolve)) : SECRET), { timeout: 50 });
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
    ['a synchronous throw', () => {
      throw new Error('no');
    }],
    ['a rejection with a hostile value', () => Promise.reject(new Proxy({}, { get: () => { throw new Error('trap'); } }))],
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
    ['{"board_id":"B"}', undefined],
    ['["board",{"id":"B"}]', undefined],
  ])('%s -> %s', (text, expected) => {
    expect(scannedBoardId(Buffer.from(text))).toBe(expected);
  });
});
