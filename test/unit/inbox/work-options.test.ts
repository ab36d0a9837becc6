import { workSettings } from '../../../src/inbox/work-options';

/** The option names a refusal of `options` gives (in backquotes), the unknown one first. */
function namesOffered(options: unknown): string[] {
  try {
    workSettings(options);
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return [...(err as Error).message.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
  }
  throw new Error('it did not throw');
}

describe('the options of work()', () => {
  it("refuses BullMQ's names lockDuration and stalledInterval, naming the options that replaced them", () => {
    expect(namesOffered({ lockDuration: 500 })).toEqual(['lockDuration', 'lockDurationMs']);
    expect(namesOffered({ stalledInterval: 500 })).toEqual(['stalledInterval', 'stalledIntervalMs']);
  });
});
