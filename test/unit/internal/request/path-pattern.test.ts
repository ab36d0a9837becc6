import { MAX_PATH_ID_LENGTH, normalisePath, pathId, pathPattern, requestPathname } from '../../../../src/internal/request/path-pattern';

const BOARD = ['boardId'];

describe('normalisePath', () => {
  it('drops one trailing slash', () => {
    expect(normalisePath('/a/b/')).toBe('/a/b');
    expect(normalisePath('/a/b')).toBe('/a/b');
  });

  it('keeps the root path as it is', () => {
    expect(normalisePath('/')).toBe('/');
    expect(normalisePath('')).toBe('');
  });
});

describe('the `path` option', () => {
  it.each([42, undefined, null, 'webhooks/board', ''])('is refused with a TypeError unless a string starting with "/": %p', (value) => {
    expect(() => pathPattern(value, BOARD)).toThrow(TypeError);
  });

  it('is refused with a TypeError when a String object, not a string', () => {
    expect(() => pathPattern(new String('/webhooks/board'), BOARD)).toThrow(TypeError);
  });

  describe('a fixed path', () => {
    const pattern = pathPattern('/webhooks/board/', BOARD);

    it('is kept normalised, with no parameter', () => {
      expect([pattern.path, pattern.param]).toEqual(['/webhooks/board', undefined]);
    });

    it('matches itself alone, with an empty id', () => {
      expect(pattern.match('/webhooks/board')).toBe('');
      expect(pattern.match('/webhooks/boards')).toBeUndefined();
      expect(pattern.match('/webhooks')).toBeUndefined();
    });

    it('is refused when it holds a colon outside a parameter segment', () => {
      expect(() => pathPattern('/webhooks:board', BOARD)).toThrow(TypeError);
      expect(() => pathPattern('/webhooks/:boardId.json', BOARD)).toThrow(TypeError);
      expect(() => pathPattern('/webhooks/x:boardId', BOARD)).toThrow(TypeError);
      expect(() => pathPattern('/webhooks/:1board', ['1board'])).toThrow(TypeError);
      expect(() => pathPattern('/webhooks/:board-id', ['board-id'])).toThrow(TypeError);
    });
  });

  describe('a path with a parameter', () => {
    it('names the parameter', () => {
      const pattern = pathPattern('/hooks/:boardId/', BOARD);
      expect([pattern.path, pattern.param]).toEqual(['/hooks/:boardId', 'boardId']);
    });

    it('is refused with a parameter name the webhook does not know', () => {
      expect(() => pathPattern('/hooks/:botId', BOARD)).toThrow(TypeError);
      expect(pathPattern('/hooks/:botId', ['boardId', 'botId']).param).toBe('botId');
    });

    it('is refused with two parameters, or a colon in another segment', () => {
      expect(() => pathPattern('/hooks/:boardId/:botId', ['boardId', 'botId'])).toThrow(TypeError);
      expect(() => pathPattern('/hooks/:boardId/:boardId', BOARD)).toThrow(TypeError);
      expect(() => pathPattern('/ho:oks/:boardId', BOARD)).toThrow(TypeError);
      expect(() => pathPattern('/hooks/:boardId/x:y', BOARD)).toThrow(TypeError);
    });

    it('accepts a name of letters, digits and underscores that starts with a letter', () => {
      expect(pathPattern('/hooks/:board_Id2', ['board_Id2']).param).toBe('board_Id2');
    });

    describe('in the last segment', () => {
      const pattern = pathPattern('/hooks/:boardId', BOARD);

      it('matches one segment after the prefix, and gives it decoded', () => {
        expect(pattern.match('/hooks/b1')).toBe('b1');
        expect(pattern.match('/hooks/a%20b')).toBe('a b');
        expect(pattern.match('/hooks/%E2%82%AC')).toBe('€');
      });

      it('does not match another prefix, an empty segment or more than one segment', () => {
        expect(pattern.match('/hookz/b1')).toBeUndefined();
        expect(pattern.match('/hooks/')).toBeUndefined();
        expect(pattern.match('/hooks')).toBeUndefined();
        expect(pattern.match('/hooks/b1/more')).toBeUndefined();
        expect(pattern.match('/other/hooks/b1')).toBeUndefined();
      });

      it('does not match a segment that is not valid percent-encoding', () => {
        expect(pattern.match('/hooks/%E2%82')).toBeUndefined();
        expect(pattern.match('/hooks/%zz')).toBeUndefined();
      });

      it(`takes ids of up to ${MAX_PATH_ID_LENGTH} characters, and no longer`, () => {
        expect(pattern.match(`/hooks/${'a'.repeat(MAX_PATH_ID_LENGTH)}`)).toBe('a'.repeat(MAX_PATH_ID_LENGTH));
        expect(pattern.match(`/hooks/${'a'.repeat(MAX_PATH_ID_LENGTH + 1)}`)).toBeUndefined();
      });

      it('decodes a segment of up to three times that many characters, and refuses a longer one undecoded', () => {
        expect(pattern.match(`/hooks/${'%41'.repeat(MAX_PATH_ID_LENGTH)}`)).toBe('A'.repeat(MAX_PATH_ID_LENGTH));
        // 67 euro signs decode to 67 characters, but are 603 characters as sent.
        expect(pattern.match(`/hooks/${'%E2%82%AC'.repeat(66)}`)).toBe('€'.repeat(66));
        expect(pattern.match(`/hooks/${'%E2%82%AC'.repeat(67)}`)).toBeUndefined();
      });
    });

    describe('between other segments', () => {
      const pattern = pathPattern('/hooks/:boardId/in/box', BOARD);

      it('matches the segment between the prefix and the rest of the path', () => {
        expect(pattern.match('/hooks/b1/in/box')).toBe('b1');
      });

      it('does not match when the rest differs or is missing', () => {
        expect(pattern.match('/hooks/b1/inbox')).toBeUndefined();
        expect(pattern.match('/hooks/b1/in/bo')).toBeUndefined();
        expect(pattern.match('/hooks/b1')).toBeUndefined();
        expect(pattern.match('/hooks//in/box')).toBeUndefined();
        expect(pattern.match('/hooks/a/b/in/box')).toBeUndefined();
      });
    });

    it('may be the first segment', () => {
      const pattern = pathPattern('/:boardId/hook', BOARD);
      expect(pattern.match('/b1/hook')).toBe('b1');
      expect(pattern.match('/hook')).toBeUndefined();
    });
  });
});

describe('requestPathname: the path of a request without its query', () => {
  it("is Express's originalUrl when mounted, else the url", () => {
    expect(requestPathname({ originalUrl: '/outer/hooks?x=1', url: '/hooks?x=1' })).toBe('/outer/hooks');
    expect(requestPathname({ url: '/hooks?x=1' })).toBe('/hooks');
    expect(requestPathname({ url: '/hooks' })).toBe('/hooks');
  });

  it('is normalised, and empty when the request has no url', () => {
    expect(requestPathname({ url: '/hooks/?a=b?c' })).toBe('/hooks');
    expect(requestPathname({})).toBe('');
  });
});

describe("pathId: the id in a request's path", () => {
  const pattern = pathPattern('/hooks/:boardId', BOARD);

  it('is undefined for a fixed path', () => {
    expect(pathId(pathPattern('/hooks', BOARD), { url: '/hooks', params: { boardId: 'b1' } })).toBeUndefined();
  });

  it('is matched from the URL first', () => {
    expect(pathId(pattern, { originalUrl: '/hooks/b%201?x=1', params: { boardId: 'other' } })).toBe('b 1');
  });

  it('is the route parameter of the same name when the URL does not match', () => {
    expect(pathId(pattern, { url: '/', params: { boardId: 'b1' } })).toBe('b1');
    expect(pathId(pattern, { url: '/', params: { boardId: 'a'.repeat(MAX_PATH_ID_LENGTH) } })).toBe('a'.repeat(MAX_PATH_ID_LENGTH));
  });

  it('is undefined without a usable route parameter', () => {
    expect(pathId(pattern, { url: '/' })).toBeUndefined();
    expect(pathId(pattern, { url: '/', params: {} })).toBeUndefined();
    expect(pathId(pattern, { url: '/', params: { boardId: '' } })).toBeUndefined();
    expect(pathId(pattern, { url: '/', params: { boardId: 7 } })).toBeUndefined();
    expect(pathId(pattern, { url: '/', params: { boardId: ['b1'] } })).toBeUndefined();
    expect(pathId(pattern, { url: '/', params: { boardId: 'a'.repeat(MAX_PATH_ID_LENGTH + 1) } })).toBeUndefined();
  });
});
