import { SvcWebhookError } from '../../../../src';
import { safeError } from '../../../../src/internal/logging/safe-error';

describe('safeError: a copy of anything thrown, safe to log', () => {
  it("copies an Error's type, message, stack and code", () => {
    const thrown = Object.assign(new TypeError('bad input'), { code: 'E_INPUT' });
    const copy = safeError(thrown);
    expect(copy).not.toBe(thrown);
    expect([copy.name, copy.message, copy.stack, (copy as { code?: unknown }).code]).toEqual(['TypeError', 'bad input', thrown.stack, 'E_INPUT']);
  });

  it("names the copy by the error's own name, or its class when the name is empty or not text", () => {
    expect(safeError(Object.assign(new Error('x'), { name: 'QuotaExceeded' })).name).toBe('QuotaExceeded');
    expect(safeError(Object.assign(new RangeError('x'), { name: '' })).name).toBe('RangeError');
    expect(safeError(Object.assign(new RangeError('x'), { name: 7 })).name).toBe('RangeError');
  });

  it('describes a thrown primitive by its type and text', () => {
    expect([safeError(null).name, safeError(null).message]).toEqual(['null', 'null']);
    expect([safeError(undefined).name, safeError(undefined).message]).toEqual(['undefined', 'undefined']);
    expect([safeError('text').name, safeError('text').message, safeError('text').stack]).toEqual(['string', 'text', 'string: text']);
    expect([safeError(42).name, safeError(42).message]).toEqual(['number', '42']);
  });

  it('gives a copy whose stack is not text one of its own type and message', () => {
    const copy = safeError(Object.assign(new TypeError('odd'), { stack: 42 }));
    expect(copy.stack).toBe('TypeError: odd');
  });

  it('gives an ordinary error: its name and stack can be set again', () => {
    const copy = safeError(new Error('x'));
    copy.name = 'Renamed';
    copy.stack = 'replaced';
    expect([copy.name, copy.stack]).toEqual(['Renamed', 'replaced']);
    expect(() => Object.defineProperty(copy, 'name', { value: 'again' })).not.toThrow();
    expect(() => Object.defineProperty(copy, 'stack', { value: 'again' })).not.toThrow();
  });

  it('gives an ordinary error: its own name and stack can be deleted', () => {
    const copy: { name?: string; stack?: string } = safeError(new TypeError('x'));
    expect(Object.keys(Object.getOwnPropertyDescriptors(copy))).toEqual(expect.arrayContaining(['name', 'stack']));
    delete copy.name;
    delete copy.stack;
    expect([Object.hasOwn(copy, 'name'), Object.hasOwn(copy, 'stack')]).toEqual([false, false]);
  });

  it('describes a revoked Proxy without touching it', () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const copy = safeError(revoked.proxy);
    expect([copy.name, copy.message, 'cause' in copy]).toEqual(['unknown', 'a thrown object that cannot be described', false]);
  });

  it('keeps a numeric code as text', () => {
    expect((safeError(Object.assign(new Error('x'), { code: 42 })) as { code?: unknown }).code).toBe('42');
  });

  it('drops a code that is neither text nor a number', () => {
    for (const code of [true, { id: 1 }, null, 42n]) expect('code' in safeError(Object.assign(new Error('x'), { code }))).toBe(false);
  });

  it('keeps an SvcWebhookError one, with its code and status', () => {
    const copy = safeError(new SvcWebhookError('store_unavailable', 'down'));
    expect(copy).toBeInstanceOf(SvcWebhookError);
    expect([(copy as SvcWebhookError).code, (copy as SvcWebhookError).status]).toEqual(['store_unavailable', 503]);
  });

  it('copies the errors of an aggregate, each made safe, at most ten of them', () => {
    const inner = Array.from({ length: 12 }, (_, i) => new RangeError(`part ${i}`));
    const copy = safeError(new AggregateError(inner, 'many failed')) as AggregateError;
    expect(copy).toBeInstanceOf(AggregateError);
    expect(copy.message).toBe('many failed');
    expect(copy.errors).toHaveLength(10);
    expect(copy.errors.map((e: Error) => [e.name, e.message])).toEqual(inner.slice(0, 10).map((e) => ['RangeError', e.message]));
    expect(copy.errors[0]).not.toBe(inner[0]);
  });

  it('keeps a cause chain four causes deep, and adds no cause to an error without one', () => {
    let chain = new Error('root');
    for (let i = 1; i <= 6; i++) chain = new Error(`level ${i}`, { cause: chain });
    const messages: string[] = [];
    for (let copy: unknown = safeError(chain); copy instanceof Error; copy = copy.cause) messages.push(copy.message);
    expect(messages).toEqual(['level 6', 'level 5', 'level 4', 'level 3', 'level 2']);
    expect('cause' in safeError(new Error('alone'))).toBe(false);
    expect(safeError(new Error('undefined cause', { cause: undefined })).cause).toMatchObject({ name: 'undefined' });
  });

  it('keeps aggregates four levels deep', () => {
    let nested: Error = new Error('leaf');
    for (let i = 1; i <= 6; i++) nested = new AggregateError([nested], `level ${i}`);
    const messages: string[] = [];
    for (let copy: unknown = safeError(nested); copy instanceof Error; copy = copy instanceof AggregateError ? copy.errors[0] : undefined)
      messages.push(copy.message);
    expect(messages).toEqual(['level 6', 'level 5', 'level 4', 'level 3', 'level 2']);
  });

  it('cuts a cyclic aggregate at a bounded depth', () => {
    const loop = new AggregateError([], 'loop');
    loop.errors.push(loop);
    let level: unknown = safeError(loop);
    let depth = 0;
    while (level instanceof AggregateError) {
      level = level.errors[0];
      depth++;
    }
    expect(depth).toBeLessThanOrEqual(5);
  });

  it('treats errors that cannot be listed as none', () => {
    const revoked = Proxy.revocable([], {});
    revoked.revoke();
    const copy = safeError(Object.assign(new Error('odd'), { errors: revoked.proxy }));
    expect(copy).not.toBeInstanceOf(AggregateError);
    expect(copy.message).toBe('odd');
  });

  it('describes a thrown symbol, with or without a description', () => {
    expect(safeError(Symbol('why')).message).toBe('Symbol(why)');
    expect(safeError(Symbol()).message).toBe('Symbol()');
    expect(safeError(Symbol()).name).toBe('symbol');
  });

  it('describes a thrown object by its text and its class', () => {
    class Failure {
      toString() {
        return 'a failure';
      }
    }
    const copy = safeError(new Failure());
    expect([copy.name, copy.message, copy.stack]).toEqual(['Failure', 'a failure', 'Failure: a failure']);
    expect(safeError(Object.create(null) as object).name).toBe('Object');
    expect(safeError({ toString: () => 7 }).message).toBe('7');
    const unprintable = {
      toString() {
        throw new Error('no');
      },
    };
    expect(safeError(unprintable).message).toBe('a thrown object that cannot be described');
  });

  it('describes a thrown function by its name and source text', () => {
    function refusedHandler(): void {}
    const copy = safeError(refusedHandler);
    expect([copy.name, copy.message]).toEqual(['refusedHandler', String(refusedHandler)]);
  });

  it('names an object of a class without a name, or of a prototype without a constructor, Object', () => {
    expect(safeError(new (class {})()).name).toBe('Object');
    expect(safeError(Object.create(Object.create(null) as object) as object).name).toBe('Object');
  });

  it('keeps an SvcWebhookError named as its class, even when the thrown one was renamed', () => {
    const thrown = Object.assign(new SvcWebhookError('store_unavailable', 'down'), { name: 'Renamed' });
    const copy = safeError(thrown);
    expect([copy.name, (copy as SvcWebhookError).code]).toEqual(['SvcWebhookError', 'store_unavailable']);
  });

  it('treats a value whose prototype cannot be read as an ordinary error, its code kept as text', () => {
    const hostile = new Proxy(
      { name: 'Hostile', message: 'odd', code: 'store_unavailable' },
      {
        getPrototypeOf() {
          throw new Error('no prototype');
        },
      },
    );
    const copy = safeError(hostile);
    expect(copy).not.toBeInstanceOf(SvcWebhookError);
    expect([copy.name, copy.message, (copy as { code?: unknown }).code]).toEqual(['Hostile', 'odd', 'store_unavailable']);
  });

  it('names a value whose name cannot be read by its class', () => {
    const hostile = new Proxy(new RangeError('odd'), {
      get(target, key) {
        if (key === 'name') throw new Error('no name');
        return Reflect.get(target, key) as unknown;
      },
    });
    expect([safeError(hostile).name, safeError(hostile).message]).toEqual(['RangeError', 'odd']);
  });
});
