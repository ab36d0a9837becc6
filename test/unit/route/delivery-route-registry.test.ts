import { HandlerRegistry } from '../../../src/route/delivery-route';

const ok = () => undefined;

describe('the handler registry', () => {
  it('has no handlers for a key nobody registered', () => {
    const registry = new HandlerRegistry<() => void>();
    expect(registry.get('task.created')).toEqual([]);
    expect(Object.isFrozen(registry.get('task.created'))).toBe(true);
  });

  it('keeps the handlers of a key in registration order', () => {
    const registry = new HandlerRegistry<() => void>();
    const a = jest.fn();
    const b = jest.fn();
    registry.add('k', a, ok);
    registry.add('k', b, ok);
    registry.add('other', b, ok);
    expect(registry.get('k')).toEqual([a, b]);
    expect(registry.get('other')).toEqual([b]);
  });

  it('registers a handler for each key of a list, once per key however often the list names it', () => {
    const registry = new HandlerRegistry<() => void>();
    const a = jest.fn();
    registry.add(['x', 'y', 'x'], a, ok);
    expect([registry.get('x'), registry.get('y')]).toEqual([[a], [a]]);
  });

  it('checks every key, once, before registering any: a refused key registers nothing', () => {
    const registry = new HandlerRegistry<() => void>();
    const check = jest.fn((key: string) => {
      if (key === 'bad') throw new TypeError('bad key');
    });
    expect(() => registry.add(['good', 'bad', 'good'], jest.fn(), check)).toThrow(TypeError);
    expect(check.mock.calls).toEqual([['good'], ['bad']]);
    expect(registry.get('good')).toEqual([]);
  });

  it.each([
    ['an empty list', []],
    ['a number', 7],
    ['undefined', undefined],
  ])('refuses %s of keys', (_what, keys) => {
    const registry = new HandlerRegistry<() => void>();
    expect(() => registry.add(keys as never, jest.fn(), ok)).toThrow(TypeError);
  });

  it('refuses a handler that is not a function, before checking keys', () => {
    const registry = new HandlerRegistry<() => void>();
    const check = jest.fn();
    expect(() => registry.add('k', 'handler' as never, check)).toThrow(TypeError);
    expect(check).not.toHaveBeenCalled();
    expect(registry.get('k')).toEqual([]);
  });
});
