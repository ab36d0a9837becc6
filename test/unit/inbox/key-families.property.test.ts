import { QueueKeys } from 'bullmq';
import fc from 'fast-check';
import { redisStoreKey } from '../../../src/dedup/redis-store';
import { BoardOrder, type ScriptRunner } from '../../../src/inbox/board-order';
import { deliveryIdOf, jobIdOf } from '../../../src/inbox/inbox-job';
import { keySegment } from '../../../src/internal/connections/redis-key';
import { hasLoneSurrogate } from '../../../src/internal/checks/unicode';

/**
 * The key families the library and BullMQ write to one Redis, with the documented prefixes: the
 * de-dup store's (`svc-webhooks:` and an id), BullMQ's (`svc-webhooks:board:…`, `…:bot:…`) and board
 * order's (`svc-webhooks:board:order:…`). For any id or board id the schema policies let through
 * (colons, braces, `*`, 600 characters, any Unicode, lone surrogates included), each family's key
 * stays in its family, and two texts never share a key.
 */
const STORE = 'svc-webhooks:';
const QUEUE_PREFIX = 'svc-webhooks';
const queueKeys = (prefix: string) => ['board', 'bot'].flatMap((queue) => Object.values(new QueueKeys(prefix).getKeys(queue)));
const JOB_KEY_SUFFIXES = ['', ':lock', ':logs', ':dependencies', ':processed', ':failed', ':unsuccessful'];

/** Texts a sender may choose: any code points, hostile pieces glued together, UUIDs, lone surrogates. */
const texts = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 600 }),
  fc.string({
    unit: fc.constantFrom(
      ':',
      '{',
      '}',
      '*',
      '?',
      '[',
      '%',
      '%3A',
      '%u',
      'board',
      'bot',
      'active',
      'order',
      'last',
      'd-',
      'id',
      'D800',
      '\ud800',
      '\udfff',
      'é',
      '😀',
      'a',
      '-',
    ),
    maxLength: 120,
  }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 50 }),
  fc.uuid(),
  fc.constantFrom('board:active', 'bot:active', 'board:order:B:last', 'id:board:active', `sha256:${'0'.repeat(64)}`, 'x'.repeat(600)),
);
const RUNS = { numRuns: 2000 };

/** The text a segment encodes: the inverse of keySegment, to show that no two texts share one. */
function decodeSegment(segment: string): string {
  const bytes: number[] = [];
  let out = '';
  const flush = () => {
    out += Buffer.from(bytes.splice(0)).toString('utf8');
  };
  for (let i = 0; i < segment.length;) {
    if (segment.startsWith('%u', i)) {
      flush();
      out += String.fromCharCode(parseInt(segment.slice(i + 2, i + 6), 16));
      i += 6;
    } else if (segment[i] === '%') {
      bytes.push(parseInt(segment.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      flush();
      out += segment[i++];
    }
  }
  flush();
  return out;
}

/** The four keys board order keeps for `board`, as its scripts are given them. */
function orderKeys(board: string, prefix = `${QUEUE_PREFIX}:board:`): string[] {
  const seen = new Set<string>();
  const redis: ScriptRunner = {
    eval: async (_script, numKeys, ...args) => {
      for (const key of args.slice(0, numKeys)) seen.add(String(key));
      return [1, -1];
    },
  };
  const order = new BoardOrder(redis, prefix, 1000, 1000);
  void order.start(board, 'd-1', 1, 0);
  void order.pass(board, 1);
  return [...seen];
}

describe('a key segment', () => {
  it('holds only ASCII letters, digits, "-", "_", "." and "%" escapes, and gives its text back', () => {
    fc.assert(
      fc.property(texts, (text) => {
        const segment = keySegment(text);
        expect(segment).toMatch(/^(?:[A-Za-z0-9_.-]|%[0-9A-F]{2}|%u[0-9A-F]{4})*$/);
        expect(decodeSegment(segment)).toBe(text);
      }),
      RUNS,
    );
  });

  it('leaves UUIDs and other plain ids as they are', () => {
    fc.assert(fc.property(fc.uuid(), (id) => expect(keySegment(id)).toBe(id)));
    expect(keySegment('B-1_x.y')).toBe('B-1_x.y');
    expect(keySegment('a:{b}*%')).toBe('a%3A%7Bb%7D%2A%25');
    expect(keySegment('é\ud800😀')).toBe('%C3%A9%uD800%F0%9F%98%80');
  });
});

describe("the de-dup store's key of a delivery id", () => {
  const bull = new Set(queueKeys(QUEUE_PREFIX));

  it('is never a key of the queues or of board order, whatever the id', () => {
    fc.assert(
      fc.property(texts, (id) => {
        const key = redisStoreKey(STORE, id);
        expect(bull.has(key)).toBe(false);
        expect(key.startsWith(`${QUEUE_PREFIX}:board:`) || key.startsWith(`${QUEUE_PREFIX}:bot:`)).toBe(false);
        expect(key).toMatch(/^svc-webhooks:(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|id:[A-Za-z0-9_.%-]*)$/);
      }),
      RUNS,
    );
  });

  it('is the prefix and the id for a (lower-case) UUID, as before; any other id is a segment after `id:`', () => {
    fc.assert(fc.property(fc.uuid(), (id) => expect(redisStoreKey(STORE, id)).toBe(STORE + id)));
    expect(redisStoreKey(STORE, 'board:active')).toBe('svc-webhooks:id:board%3Aactive');
    expect(redisStoreKey(STORE, 'A0000000-0000-4000-8000-000000000001')).toBe('svc-webhooks:id:A0000000-0000-4000-8000-000000000001');
  });

  it('differs for two different ids', () => {
    fc.assert(
      fc.property(texts, texts, (a, b) => {
        fc.pre(a !== b);
        expect(redisStoreKey(STORE, a)).not.toBe(redisStoreKey(STORE, b));
      }),
      RUNS,
    );
  });

  it('has no hash tag after the prefix: on a cluster the ids spread over the slots', () => {
    fc.assert(
      fc.property(texts, (id) => expect(redisStoreKey(STORE, id).slice(STORE.length)).not.toMatch(/[{}]/)),
      RUNS,
    );
  });
});

describe("board order's keys of a board", () => {
  it('are four keys under `order:` and the board as a segment, none a key of BullMQ or of another board', () => {
    const bull = new Set(queueKeys(QUEUE_PREFIX));
    fc.assert(
      fc.property(texts, texts, (board, other) => {
        fc.pre(board !== other);
        const keys = orderKeys(board);
        expect(keys.sort()).toEqual(['last', 'lock', 'passed', 'pending'].map((part) => `svc-webhooks:board:order:${keySegment(board)}:${part}`));
        for (const key of keys) {
          expect(bull.has(key)).toBe(false);
          // BullMQ's per-job keys begin with the job id, which begins with `d-`.
          expect(key.startsWith('svc-webhooks:board:d-')).toBe(false);
        }
        const theirs = new Set(orderKeys(other));
        expect(keys.filter((k) => theirs.has(k))).toEqual([]);
      }),
      RUNS,
    );
  });

  it("on a cluster, hash to the queue prefix's tag whatever the board id", () => {
    fc.assert(
      fc.property(texts, (board) => {
        // Redis hashes a key by what lies between its first `{` and the first `}` after it.
        for (const key of orderKeys(board, '{svc-webhooks}:board:')) expect([key.indexOf('{'), key.indexOf('}')]).toEqual([0, 13]);
      }),
      RUNS,
    );
  });
});

describe('the job id of a delivery', () => {
  it('is `d-` and the id without ":" or a lone surrogate, gives the id back, and differs for two ids (as Redis receives it, in UTF-8)', () => {
    const bull = new Set(queueKeys(QUEUE_PREFIX));
    fc.assert(
      fc.property(texts, texts, (a, b) => {
        const job = jobIdOf(a);
        expect(job.startsWith('d-')).toBe(true);
        expect(job.includes(':') || hasLoneSurrogate(job)).toBe(false);
        expect(deliveryIdOf(job)).toBe(a);
        for (const suffix of JOB_KEY_SUFFIXES) expect(bull.has(`svc-webhooks:board:${job}${suffix}`)).toBe(false);
        if (a !== b) expect(Buffer.from(jobIdOf(a), 'utf8').equals(Buffer.from(jobIdOf(b), 'utf8'))).toBe(false);
      }),
      RUNS,
    );
  });
});
