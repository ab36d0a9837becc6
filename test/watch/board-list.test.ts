import { LIST_TIMEOUT_MS, MAX_BOARDS, listBoards } from '../../src/watch/board-list';

describe('listBoards: the boards to watch, from a list or a function', () => {
  it('valid ids once each, in order; the rest counted as skipped', async () => {
    expect(await listBoards(['a', 'b', 'a', '', ' c', 'd\n', '.', '..', 'x'.repeat(201), 'e'])).toEqual({ ids: ['a', 'b', 'e'], skipped: 6, truncated: false });
  });

  it('any iterable a function answers, or a promise of one', async () => {
    expect((await listBoards(() => new Set(['a', 'b']))).ids).toEqual(['a', 'b']);
    expect((await listBoards(async () => ['c'])).ids).toEqual(['c']);
    expect(
      (
        await listBoards(function* () {
          yield 'd';
        } as unknown as () => string[])
      ).ids,
    ).toEqual(['d']);
  });

  it.each([
    ['a string', 'abc'],
    ['null', null],
    ['a number', 3],
    ['an object', { ids: [] }],
  ])('rejects %s for an answer', async (_name, answer) => {
    await expect(listBoards(() => answer as unknown as string[])).rejects.toThrow(/must answer an array/);
  });

  it(`takes at most ${MAX_BOARDS} boards, and says it cut the list`, async () => {
    function* many() {
      for (let i = 0; ; i++) yield `b${i}`;
    }
    const { ids, truncated } = await listBoards(() => many());
    expect(ids).toHaveLength(MAX_BOARDS);
    expect(truncated).toBe(true);
  });

  it(`gives up on a function that does not answer within ${LIST_TIMEOUT_MS} ms`, async () => {
    jest.useFakeTimers();
    try {
      const listing = listBoards(() => new Promise<string[]>(() => undefined));
      const settled = expect(listing).rejects.toThrow(/did not answer within 30000 ms/);
      await jest.advanceTimersByTimeAsync(LIST_TIMEOUT_MS);
      await settled;
    } finally {
      jest.useRealTimers();
    }
  });
});
