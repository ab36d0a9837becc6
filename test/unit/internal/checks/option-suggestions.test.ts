import { numberOption, readOptions, stringOption, type OptionScope } from '../../../../src/internal/checks/option-table';

/**
 * What a factory offers for an option name it does not know: the closest declared name, the name
 * that replaced it, or, when none is close, every name it takes. Asserted by the names the refusal
 * gives (in backquotes), the unknown one first.
 */
const table = {
  timeoutMs: numberOption({ doc: 'd', unit: 'ms', default: 100, min: 1 }),
  bodyBytes: numberOption({ doc: 'd', unit: 'bytes', default: 100, min: 1 }),
  maxBytesPerLine: numberOption({ doc: 'd', unit: 'count', default: 100, min: 1 }),
  name: stringOption({ doc: 'd', default: undefined }),
};
const ALL = Object.keys(table);

/** The option names a refusal of `input` gives. */
function namesOffered(input: Record<string, unknown>, scope: OptionScope = { factory: 'thing' }): string[] {
  try {
    readOptions(table, input, scope);
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return [...(err as Error).message.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
  }
  throw new Error('it did not throw');
}

describe('an unknown option name', () => {
  it('is refused naming the closest option, also by a factory that renamed none', () => {
    expect(namesOffered({ timout: 1 })).toEqual(['timout', 'timeoutMs']);
    expect(namesOffered({ timout: 1 }, { factory: 'thing', renamed: { timeout: 'timeoutMs' } })).toEqual(['timout', 'timeoutMs']);
  });

  it('is refused naming the option that replaced it, when it was renamed', () => {
    expect(namesOffered({ limit: 1 }, { factory: 'thing', renamed: { limit: 'maxBytesPerLine' } })).toEqual(['limit', 'maxBytesPerLine']);
  });

  it('when short, is offered an option at most two edits away; one three edits away is not close, and every option is listed', () => {
    expect(namesOffered({ nmae: 'x' })).toEqual(['nmae', 'name']);
    expect(namesOffered({ naxyz: 'x' })).toEqual(['naxyz', ...ALL]);
  });

  it('when long, is offered an option up to a third of its length in edits away', () => {
    expect(namesOffered({ maxBitsPerLn: 1 })).toEqual(['maxBitsPerLn', 'maxBytesPerLine']);
  });

  it('is compared without regard to case', () => {
    expect(namesOffered({ bodybytes: 1 })).toEqual(['bodybytes', 'bodyBytes']);
  });

  it('may leave out the unit that ends an option name, not a unit inside it', () => {
    expect(namesOffered({ body: 1 })).toEqual(['body', 'bodyBytes']);
    expect(namesOffered({ maxPerLine: 1 })).toEqual(['maxPerLine', ...ALL]);
  });
});
