import { svcBoardWebhook, svcBotWebhook } from '../../../../src';
import {
  booleanOption,
  choiceOption,
  editDistance,
  functionOption,
  kindOf,
  numberOption,
  readOptions,
  stringOption,
} from '../../../../src/internal/checks/option-table';

const SECRET = 'a-secret-of-sixteen+';

function messageOf(work: () => unknown): string {
  try {
    work();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('it did not throw');
}

describe('an option table', () => {
  const table = {
    timeoutMs: numberOption({ doc: 'd', unit: 'ms', default: 100, min: 1, max: 1000 }),
    maxIds: numberOption({ doc: 'd', unit: 'count', default: 5, min: 1 }),
    policy: choiceOption({ doc: 'd', choices: ['a', 'b'] as const, default: 'a' }),
    name: stringOption({ doc: 'd', default: undefined }),
  };
  const read = (input: unknown) => readOptions(table, input, { factory: 'thing', renamed: { timeout: 'timeoutMs' } });

  it('reads every declared option, absent ones as their default', () => {
    expect(read({})).toEqual({ timeoutMs: 100, maxIds: 5, policy: 'a', name: undefined });
    expect(read({ timeoutMs: 7, maxIds: 9, policy: 'b', name: 'n' })).toEqual({ timeoutMs: 7, maxIds: 9, policy: 'b', name: 'n' });
  });

  it('refuses a name it does not declare, naming the closest one', () => {
    expect(messageOf(() => read({ maxId: 3 }))).toBe('svc-webhooks: thing has no option `maxId`; did you mean `maxIds`?');
    // The name without its unit is a spelling of it too.
    expect(messageOf(() => read({ timout: 3 }))).toContain('did you mean `timeoutMs`?');
  });

  it('names the option that replaced a renamed one', () => {
    expect(messageOf(() => read({ timeout: 3 }))).toBe('svc-webhooks: thing has no option `timeout`: it was renamed `timeoutMs`');
  });

  it('lists the options when no name is close', () => {
    expect(messageOf(() => read({ colour: 'red' }))).toBe(
      'svc-webhooks: thing has no option `colour`; the options are `timeoutMs`, `maxIds`, `policy`, `name`',
    );
  });

  it('refuses what is not an options object, saying what it got', () => {
    for (const [input, kind] of [
      [null, 'null'],
      ['x', 'a string of 1 characters'],
      [[], 'an empty array'],
      [3, 'number 3'],
    ] as const) {
      expect(messageOf(() => read(input))).toBe(`svc-webhooks: thing options must be an object; got ${kind}`);
    }
  });

  it('refuses a number out of bounds or of another kind with a RangeError naming the option, the unit and what it got', () => {
    expect(() => read({ timeoutMs: 0 })).toThrow(RangeError);
    expect(messageOf(() => read({ timeoutMs: 1001 }))).toBe('svc-webhooks: `timeoutMs` must be an integer of milliseconds from 1 to 1000; got number 1001');
    expect(messageOf(() => read({ timeoutMs: '5' }))).toBe(
      'svc-webhooks: `timeoutMs` must be an integer of milliseconds from 1 to 1000; got a string of 1 characters',
    );
    expect(messageOf(() => read({ maxIds: 0.5 }))).toBe('svc-webhooks: `maxIds` must be an integer at least 1; got number 0.5');
    expect(() => read({ maxIds: Number.NaN })).toThrow(RangeError);
  });

  it('refuses a choice it does not offer', () => {
    expect(messageOf(() => read({ policy: 'c' }))).toBe("svc-webhooks: `policy` must be one of 'a', 'b'; got a string of 1 characters");
  });

  it('names a nested option with its parent: `inbox.gapWaitMs`', () => {
    expect(messageOf(() => svcBoardWebhook({ secret: SECRET, inbox: { connection: 'redis://h', gapWaitMs: -1 } }))).toContain('`inbox.gapWaitMs` must be');
    expect(messageOf(() => svcBoardWebhook({ secret: SECRET, inbox: { connection: 'redis://h', gapWait: 1 } as never }))).toContain(
      'has no option `inbox.gapWait`; did you mean `inbox.gapWaitMs`?',
    );
    expect(messageOf(() => svcBoardWebhook({ secret: () => SECRET, secretLookup: { ttl: 1 } as never }))).toContain(
      '`secretLookup.ttl`: it was renamed `secretLookup.ttlMs`',
    );
  });
});

describe('a numeric option', () => {
  const option = (value: unknown) => numberOption({ doc: 'd', unit: 'ms', default: 50, min: 1, max: 100, integer: false }).read(value, 'timeoutMs');

  it('is the default when absent', () => {
    expect(option(undefined)).toBe(50);
  });

  it('is the value from the least to the greatest allowed, both included', () => {
    for (const value of [1, 1.5, 99.9, 100]) expect(option(value)).toBe(value);
  });

  it.each([0, 0.999, 100.001, -1, Number.NaN, Number.POSITIVE_INFINITY, '10', null])('is refused with a RangeError at setup: %p', (value) => {
    expect(() => option(value)).toThrow(RangeError);
  });

  it('with an exclusive least value, refuses that value and takes any more', () => {
    const positive = numberOption({ doc: 'd', unit: 'ms', default: 5, min: 0, minExclusive: true, integer: false });
    expect(() => positive.read(0, 'x')).toThrow(RangeError);
    expect(positive.read(0.001, 'x')).toBe(0.001);
    expect(positive.bounds).toBe('more than 0');
  });

  it('with no default and none given, is undefined; its documentation says what it takes', () => {
    const optional = numberOption({ doc: 'd', unit: 'seconds', default: undefined, min: 1, max: 9 });
    expect(optional.read(undefined, 'x')).toBeUndefined();
    expect([optional.type, optional.defaultText, optional.bounds]).toEqual(['number (seconds)', undefined, '1 to 9']);
  });

  it('documents its unit in its type, a count as a plain number', () => {
    expect(['ms', 'seconds', 'bytes', 'count'].map((unit) => numberOption({ doc: 'd', unit: unit as 'ms', default: 1, min: 0 }).type)).toEqual([
      'number (milliseconds)',
      'number (seconds)',
      'number (bytes)',
      'number',
    ]);
  });
});

describe('a boolean option', () => {
  const option = booleanOption({ doc: 'd', default: true });

  it('is the default when absent, and true or false as given', () => {
    expect([option.read(undefined, 'x'), option.read(false, 'x'), option.read(true, 'x')]).toEqual([true, false, true]);
  });

  it.each(['true', 1, 0, null, {}])('refuses anything else with a TypeError at setup: %p', (value) => {
    expect(() => option.read(value, 'x')).toThrow(TypeError);
  });
});

describe('a function option', () => {
  const clock = () => 5;
  const option = functionOption<() => number>({ doc: 'd', type: '() => number', default: Date.now });

  it('is the default when absent, and the function as given', () => {
    expect(option.read(undefined, 'now')).toBe(Date.now);
    expect(option.read(clock, 'now')).toBe(clock);
  });

  it.each([5, 'Date.now', null, {}])('refuses what is not a function with a TypeError at setup: %p', (value) => {
    expect(() => option.read(value, 'now')).toThrow(TypeError);
  });
});

describe('kindOf, the part of an error that says what was given', () => {
  it('never quotes a string, which may be a secret in the wrong place', () => {
    expect(kindOf('hunter2-but-longer-than-16')).toBe('a string of 26 characters');
    expect(kindOf('')).toBe('an empty string');
  });

  it('says what anything else is', () => {
    expect([undefined, null, 3, true, () => 1, [1, 2], {}, Symbol('s'), 1n].map(kindOf)).toEqual([
      'undefined',
      'null',
      'number 3',
      'boolean true',
      'a function',
      'an array of 2',
      'an object',
      'a symbol',
      'bigint 1',
    ]);
  });
});

describe('editDistance', () => {
  it('counts insertions, deletions and substitutions', () => {
    expect([
      editDistance('', ''),
      editDistance('abc', 'abc'),
      editDistance('abc', 'abd'),
      editDistance('abc', 'ab'),
      editDistance('ab', 'abc'),
      editDistance('kitten', 'sitting'),
    ]).toEqual([0, 0, 1, 1, 1, 3]);
  });
});

describe('a missing secret names what it got and the usual cause', () => {
  it.each([
    [
      'undefined (an unset environment variable)',
      undefined,
      /`secret` must be the webhook secret .*got undefined: is the environment variable that should hold it set/,
    ],
    ['an empty string (a variable set but empty)', '', /got an empty string: an environment variable that is set but empty gives one/],
    ['a number', 1234, /got number 1234$/],
    ['an object', { value: SECRET }, /got an object$/],
  ])('%s', (_what, secret, message) => {
    expect(() => svcBoardWebhook({ secret: secret as string })).toThrow(message);
    expect(() => svcBotWebhook({ secret: secret as string })).toThrow(message);
  });

  it('also when the secret is passed alone: svcBoardWebhook(process.env.UNSET)', () => {
    expect(() => svcBoardWebhook(undefined as unknown as string)).toThrow(/got undefined: is the environment variable/);
    expect(() => svcBotWebhook('')).toThrow(/got an empty string/);
  });

  it('never quotes the secret it refuses for its length', () => {
    const short = 'short-but-secret';
    expect(messageOf(() => svcBoardWebhook(short.slice(0, 10)))).not.toContain(short.slice(0, 10));
  });
});

describe('the logger option', () => {
  it('takes console and any object with info, warn and error, or false', () => {
    expect(() => svcBoardWebhook({ secret: SECRET, logger: console })).not.toThrow();
    expect(() => svcBoardWebhook({ secret: SECRET, logger: { info: () => 1, warn: () => 1, error: () => 1 } })).not.toThrow();
    expect(() => svcBoardWebhook({ secret: SECRET, logger: false })).not.toThrow();
  });

  it('refuses anything else, saying what it takes', () => {
    expect(messageOf(() => svcBoardWebhook({ secret: SECRET, logger: 'info' as never }))).toBe(
      'svc-webhooks: `logger` must be a pino logger, an object with info, warn and error methods (console, winston, bunyan), or false for none; got a string of 4 characters',
    );
    expect(() => svcBoardWebhook({ secret: SECRET, logger: { info: () => 1 } as never })).toThrow(TypeError);
    expect(() => svcBoardWebhook({ secret: SECRET, logger: true as never })).toThrow(TypeError);
  });
});
