import { stdSerializers } from 'pino';
import { REDACTED, TOO_DEEP, UNREADABLE, redactingLogOptions } from '../../../../src/internal/logging/log-redaction';
import { nested, unnested } from './nested-values';

const SECRET = 'board-secret-0123456789abcdef';
const { formatters } = redactingLogOptions([SECRET]);
const line = (fields: object) => formatters.log(fields) as Record<string, unknown>;
const HEX = 'ab'.repeat(32);

describe('a log line', () => {
  it('is left as it is when it holds nothing to drop', () => {
    const fields = { deliveryId: 'd1', nested: { list: [1, 'two', { three: 3 }] } };
    expect(line(fields)).toBe(fields);
  });

  it('drops credential fields in any case and at any depth, keeping the other fields and their order', () => {
    const logged = line({ a: 1, b: { Authorization: 'Bearer x', keep: true }, Password: 'p', c: [{ 'Set-Cookie': 'k' }], d: 4 });
    expect(logged).toEqual({ a: 1, b: { Authorization: REDACTED, keep: true }, Password: REDACTED, c: [{ 'Set-Cookie': REDACTED }], d: 4 });
    expect(Object.keys(logged)).toEqual(['a', 'b', 'Password', 'c', 'd']);
  });

  it.each(['secret', 'secrets', 'authorization', 'proxy-authorization', 'x-svc-signature', 'token', 'cookie', 'set-cookie', 'password'])(
    'drops a field named %s',
    (name) => {
      expect(line({ [name]: 'value', [name.toUpperCase()]: 'value', kept: 'value' })).toEqual({
        [name]: REDACTED,
        [name.toUpperCase()]: REDACTED,
        kept: 'value',
      });
    },
  );

  it('drops the configured secret, signatures and svc tokens from any string', () => {
    expect(line({ note: `secret ${SECRET} twice ${SECRET}` }).note).toBe(`secret ${REDACTED} twice ${REDACTED}`);
    expect(line({ sig: `v1=${HEX}, sha256=${HEX.toUpperCase()}` }).sig).toBe(`v1=${REDACTED}, sha256=${REDACTED}`);
    expect(line({ note: 'a=b and v1=short' }).note).toBe('a=b and v1=short');
    expect(line({ said: 'token svc_bot_ABCDEFGHIJKLMNOPQRSTUV.xyz here' }).said).not.toContain('ABCDEFGHIJKLMNOPQRSTUV');
    expect(line({ said: 'svc_ is only a prefix' }).said).toBe('svc_ is only a prefix');
  });

  it('drops a signature of any hex digits, in either case', () => {
    const digits = '0123456789abcdef'.repeat(4);
    expect(line({ sig: `v1=${digits}` }).sig).toBe(`v1=${REDACTED}`);
    expect(line({ sig: `sha256=${digits.toUpperCase()}` }).sig).toBe(`sha256=${REDACTED}`);
  });

  it('keeps what only looks partly like a signature: fewer or more than 64 hex digits', () => {
    for (const kept of ['v1=abc', `v1=${HEX.slice(1)}`, `v1=${HEX}a`, `v2=${HEX}`]) expect(line({ kept }).kept).toBe(kept);
  });

  it('drops a signature in any spelling of its scheme and after any prefix', () => {
    expect(line({ sig: `V1=${HEX}` }).sig).toBe(`V1=${REDACTED}`);
    expect(line({ sig: `SHA256=${HEX}` }).sig).toBe(`SHA256=${REDACTED}`);
    expect(line({ url: `/hooks?sig_v1=${HEX}&x=1` }).url).toBe(`/hooks?sig_v1=${REDACTED}&x=1`);
    expect(line({ sig: `xv1=${HEX}`, other: `sha256=${HEX}_` })).toEqual({ sig: `xv1=${REDACTED}`, other: `sha256=${REDACTED}_` });
  });

  it('drops the secret, a signature or a token from the names of fields, at any depth', () => {
    const logged = line({ [`by ${SECRET}`]: 1, nested: { [`v1=${HEX}`]: 2, keep: 3 } });
    expect(logged).toEqual({ [`by ${REDACTED}`]: 1, nested: { [`v1=${REDACTED}`]: 2, keep: 3 } });
    expect(JSON.stringify(logged)).not.toContain(SECRET);
  });

  it("scrubs a field named __proto__ as an own field, never as the copy's prototype", () => {
    const logged = line(JSON.parse(`{"__proto__": {"note": "${SECRET}"}}`) as object);
    expect(Object.getPrototypeOf(logged)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(logged, '__proto__')).toMatchObject({ enumerable: true, writable: true, configurable: true });
    expect(JSON.stringify(logged)).toBe(`{"__proto__":{"note":"${REDACTED}"}}`);
  });

  it('drops the value after a credential name in a raw header list, and only that one', () => {
    const raw = ['Host', 'h', 'Authorization', 'Bearer x', 'X-Svc-Signature', `v1=${HEX}`, 'x-other', 'secret'];
    expect(line({ raw }).raw).toEqual(['Host', 'h', 'Authorization', REDACTED, 'X-Svc-Signature', REDACTED, 'x-other', 'secret']);
    // A credential name at an odd index is a value, not a name: what follows it is a name.
    expect(line({ list: ['x', 'token', 'kept'] }).list).toEqual(['x', 'token', 'kept']);
    const unchanged = ['Host', 'h'];
    expect(line({ unchanged }).unchanged).toBe(unchanged);
  });

  it('shows a request logged whole as its method, URL and headers, scrubbed', () => {
    class Request {
      method = 'POST';
      url = `/hooks?sig=v1=${HEX}`;
      headers = { host: 'h', authorization: 'Bearer x' };
      rawHeaders = ['Host', 'h', 'Authorization', 'Bearer x'];
      socket = { secretStuff: true };
    }
    expect(line({ req: new Request() }).req).toEqual({ method: 'POST', url: `/hooks?sig=v1=${REDACTED}`, headers: { host: 'h', authorization: REDACTED } });
  });

  it('scrubs a class instance as JSON writes it: its own fields', () => {
    class Settings {
      constructor(
        readonly name: string,
        readonly webhookSecret: string,
        readonly headers: object,
      ) {}
    }
    const logged = line({ settings: new Settings('board', SECRET, { authorization: 'x' }) });
    expect(logged.settings).toEqual({ name: 'board', webhookSecret: REDACTED, headers: { authorization: REDACTED } });
  });

  it('scrubs what a toJSON method answers, as JSON writes that rather than the object', () => {
    const logged = line({ config: { toJSON: () => ({ note: `uses ${SECRET}`, nested: { token: 't' } }) }, said: { toJSON: () => `v1=${HEX}` } });
    expect(logged).toEqual({ config: { note: `uses ${REDACTED}`, nested: { token: REDACTED } }, said: `v1=${REDACTED}` });
    // toJSON is asked as JSON.stringify asks it, with the key ('' at the top).
    const keys: unknown[] = [];
    line({ asked: { toJSON: (key: unknown) => (keys.push(key), 'x') } });
    expect(keys).toEqual(['']);
    // Answers that answer with another object with toJSON, for ever, end at the depth limit.
    const endless = (): object => ({ toJSON: endless });
    expect(line({ endless: endless() }).endless).toBe(TOO_DEEP);
    // One whose toJSON answers itself is written as its fields.
    const self = {
      secret: 'x',
      toJSON(): unknown {
        return this;
      },
    };
    expect(line({ self }).self).toEqual({ secret: REDACTED, toJSON: self.toJSON });
  });

  it('leaves a class instance with nothing to drop as it is', () => {
    const at = new Date(0);
    class Holder {
      headers = { host: 'x' };
    }
    const holder = new Holder();
    const logged = line({ at, holder });
    expect([logged.at, logged.holder]).toEqual([at, holder]);
    expect(logged.holder).toBe(holder);
    expect(logged.at).toBe(at);
  });

  it('writes a Map, a Set, Headers and a Request as what they hold, scrubbed, and bytes by their size', () => {
    const logged = line({
      map: new Map<unknown, unknown>([
        ['secret', 'x'],
        ['said', SECRET],
      ]),
      set: new Set([SECRET, 'kept']),
      headers: new Headers({ authorization: 'Bearer x', 'x-kept': 'kept' }),
      request: new Request('https://example.com/', { method: 'POST', headers: { cookie: 'c=1' } }),
      bytes: new Uint8Array(3),
      buffer: Buffer.from(SECRET),
    });
    expect(logged).toEqual({
      map: { secret: REDACTED, said: REDACTED },
      set: [REDACTED, 'kept'],
      headers: { authorization: REDACTED, 'x-kept': 'kept' },
      request: { method: 'POST', url: 'https://example.com/', headers: { cookie: REDACTED } },
      bytes: '[Uint8Array: 3 bytes]',
      buffer: `[Buffer: ${Buffer.byteLength(SECRET)} bytes]`,
    });
  });

  it('writes a Response by its status and scrubbed headers, and an object that only names itself Headers by its fields', () => {
    const impostor = { [Symbol.toStringTag]: 'Headers', said: SECRET, kept: 'kept' };
    const logged = line({ response: new Response(null, { status: 201, headers: { 'set-cookie': 'c=1' } }), impostor });
    expect(logged).toEqual({ response: { status: 201, headers: { 'set-cookie': REDACTED } }, impostor: { said: REDACTED, kept: 'kept' } });
  });

  it('writes a placeholder for an instance whose fields or toJSON throw', () => {
    class Hostile {
      get boom(): string {
        throw new Error('a getter that throws');
      }
    }
    Object.defineProperty(Hostile.prototype, 'boom', { enumerable: true });
    const own = Object.defineProperty(new (class Own {})(), 'boom', {
      enumerable: true,
      get: () => {
        throw new Error('no');
      },
    });
    const logged = line({
      own,
      json: new (class {
        toJSON(): never {
          throw new Error('no');
        }
      })(),
    });
    expect(logged).toEqual({ own: UNREADABLE, json: UNREADABLE });
  });

  it('takes only a class instance for a request logged whole: a plain object with headers keeps every field', () => {
    for (const proto of [Object.prototype, null]) {
      const like = Object.assign(Object.create(proto) as Record<string, unknown>, {
        headers: { authorization: 'x' },
        rawHeaders: ['Authorization', 'x'],
        note: 'kept',
      });
      expect(line({ like }).like).toEqual({ headers: { authorization: REDACTED }, rawHeaders: ['Authorization', REDACTED], note: 'kept' });
    }
  });

  it('scrubs an object without a prototype like a plain one', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { token: 't', keep: 1 });
    expect(line({ bare }).bare).toEqual({ token: REDACTED, keep: 1 });
  });

  it('cuts what is nested deeper than ten levels rather than write it unscrubbed', () => {
    let deep: Record<string, unknown> = { secret: 'x' };
    for (let i = 0; i < 10; i++) deep = { deeper: deep };
    let logged = line({ deep }).deep as Record<string, unknown>;
    for (let i = 0; i < 9; i++) logged = logged.deeper as Record<string, unknown>;
    expect(logged.deeper).toBe(TOO_DEEP);
    let shallow: Record<string, unknown> = { secret: 'x' };
    for (let i = 0; i < 9; i++) shallow = { deeper: shallow };
    let kept = line({ shallow }).shallow as Record<string, unknown>;
    for (let i = 0; i < 9; i++) kept = kept.deeper as Record<string, unknown>;
    expect(kept).toEqual({ secret: REDACTED });
  });

  it('leaves an error under `err` to the error serializer, which scrubs it', () => {
    const err = new Error(`failed with ${SECRET}`);
    const logged = line({ err, token: 't' });
    expect(logged.err).toBe(err);
    expect(logged.token).toBe(REDACTED);
    const serialized = redactingLogOptions([SECRET]).serializers.err(err) as Record<string, unknown>;
    expect(serialized).toMatchObject({ type: 'Error', message: `failed with ${REDACTED}` });
    expect(redactingLogOptions([SECRET]).serializers.err({ message: SECRET })).toEqual({ message: REDACTED });
  });

  it("serializes an error under `err` as pino's standard serializer does, causes joined in, then scrubs it", () => {
    const { serializers } = redactingLogOptions([SECRET]);
    const plain = Object.assign(new Error('outer', { cause: new Error('inner') }), { code: 'E1' });
    expect(serializers.err(plain)).toEqual({ ...stdSerializers.err(plain) });
    const secretCause = new Error('outer', { cause: new Error(`inner ${SECRET}`) });
    expect(serializers.err(secretCause)).toMatchObject({ type: 'Error', message: `outer: inner ${REDACTED}` });
    expect(JSON.stringify(serializers.err(secretCause))).not.toContain(SECRET);
  });

  it('scrubs the bindings of child loggers', () => {
    expect(formatters.bindings({ boardId: 'b', secret: SECRET })).toEqual({ boardId: 'b', secret: REDACTED });
  });

  it('drops configured secrets of 16 characters and more, and ignores shorter ones', () => {
    const options = redactingLogOptions(['fifteen-chars-x', 'sixteen-chars-xx']);
    expect(options.formatters.log({ note: 'fifteen-chars-x sixteen-chars-xx' })).toEqual({ note: 'fifteen-chars-x [Redacted]' });
  });
});

class UpstreamError extends Error {}
UpstreamError.prototype.name = 'UpstreamError';

/** An error with fields of its own, as libraries throw them. */
function failure(message: string, fields: Record<string, unknown>, cause?: unknown): Error {
  const err = new UpstreamError(message, cause === undefined ? undefined : { cause });
  return Object.assign(err, fields);
}

describe('an error logged under a key of its own (not `err`)', () => {
  it('becomes its type, message, stack and own fields, each scrubbed', () => {
    const err = failure(`rejected with ${SECRET}`, { status: 401, Token: 'abc', detail: { secret: 'x', note: `key ${SECRET}` } });
    const logged = line({ failure: err }).failure as Record<string, unknown>;
    expect(logged).toEqual({
      type: 'UpstreamError',
      message: `rejected with ${REDACTED}`,
      stack: expect.any(String),
      status: 401,
      Token: REDACTED,
      detail: { secret: REDACTED, note: `key ${REDACTED}` },
    });
    expect(logged.stack).not.toContain(SECRET);
    expect(logged.stack).toContain('UpstreamError');
  });

  it('has no stack when the error has none that is a string', () => {
    const err = new Error('no stack');
    Object.defineProperty(err, 'stack', { value: undefined });
    const logged = line({ failure: err }).failure as Record<string, unknown>;
    expect(logged).toEqual({ type: 'Error', message: 'no stack' });
    expect(Object.keys(logged)).toEqual(['type', 'message']);
  });

  it('keeps its cause, scrubbed like the error itself, once', () => {
    const cause = failure(`inner ${SECRET}`, { password: 'p' });
    const logged = line({ failure: failure('outer', {}, cause) }).failure as Record<string, unknown>;
    expect(Object.keys(logged).sort()).toEqual(['cause', 'message', 'stack', 'type']);
    expect(logged.cause).toEqual({ type: 'UpstreamError', message: `inner ${REDACTED}`, stack: expect.any(String), password: REDACTED });
  });

  it('stops at a bounded depth on an error that holds itself', () => {
    const err = failure('loop', {});
    Object.assign(err, { again: { err } });
    let logged: unknown = line({ failure: err }).failure;
    let steps = 0;
    // Each level copies the error; past the depth limit it is cut.
    while (typeof logged === 'object' && steps < 50) {
      const again = (logged as { again: unknown }).again;
      logged = typeof again === 'object' ? (again as { err: unknown }).err : again;
      steps++;
    }
    expect(logged).toBe(TOO_DEEP);
    expect(steps).toBeLessThanOrEqual(11);
  });

  it('stops at a bounded depth on an error that is its own cause', () => {
    const err = failure('own cause', {});
    Object.assign(err, { cause: err });
    let logged: unknown = line({ failure: err }).failure;
    let steps = 0;
    while (typeof logged === 'object' && steps < 50) {
      logged = (logged as Record<string, unknown>).cause;
      steps++;
    }
    expect(logged).toBe(TOO_DEEP);
    expect(steps).toBeLessThanOrEqual(10);
  });

  it('is replaced by a plain note when reading it throws', () => {
    const err = new Error('unreadable');
    Object.defineProperty(err, 'name', {
      get() {
        throw new Error('a getter that throws');
      },
    });
    expect(line({ failure: err }).failure).toEqual({ type: 'Error', message: 'the error could not be read' });
  });
});

describe('what a log line drops', () => {
  it('is written as pino writes a censored value, "[Redacted]"', () => {
    expect(line({ token: 't' }).token).toBe('[Redacted]');
    expect(REDACTED).toBe('[Redacted]');
  });

  it('leaves a mark where an object was too deep or could not be read', () => {
    expect([TOO_DEEP, UNREADABLE]).toEqual(['[Too deep]', '[Unreadable]']);
  });

  it('is dropped from a copy: the logged values themselves are left unchanged', () => {
    const raw = ['Authorization', 'Bearer x', 'Host', 'h'];
    const fields = { raw, headers: { cookie: 'c', host: 'h' } };
    const logged = line(fields);
    expect(logged.raw).toEqual(['Authorization', REDACTED, 'Host', 'h']);
    expect(logged.raw).not.toBe(raw);
    expect(raw).toEqual(['Authorization', 'Bearer x', 'Host', 'h']);
    expect(fields.headers).toEqual({ cookie: 'c', host: 'h' });
  });
});

describe('values a log line keeps as they are', () => {
  it('null, undefined, numbers, booleans and functions, in any field', () => {
    const fn = (): void => undefined;
    const fields = { a: null, b: undefined, c: 1, d: true, e: fn, list: [null, undefined, 2] };
    expect(line(fields)).toBe(fields);
  });

  it('a raw header list whose last name has no value after it', () => {
    const raw = ['Host', 'h', 'Authorization'];
    expect(line({ raw }).raw).toBe(raw);
  });

  it('a list with values that are not names where a name would be', () => {
    const list = [1, 'token', null, 'token', { a: 1 }, 'secret'];
    expect(line({ list }).list).toBe(list);
  });

  it('a class instance that only looks partly like a request, with nothing to drop in its fields', () => {
    class Partial {
      constructor(
        readonly headers: unknown,
        readonly rawHeaders: unknown,
      ) {}
    }
    for (const partial of [new Partial(null, []), new Partial('authorization: x', []), new Partial({ host: 'x' }, 'Authorization x')]) {
      expect(line({ partial }).partial).toBe(partial);
    }
    // Its fields are scrubbed as any instance's are.
    expect(line({ partial: new Partial({ authorization: 'x' }, 'Authorization x') }).partial).toEqual({
      headers: { authorization: REDACTED },
      rawHeaders: 'Authorization x',
    });
  });
});

describe('the depth limit', () => {
  class Request {
    method = 'POST';
    url: unknown = { token: 't' };
    headers = { authorization: 'Bearer x' };
    rawHeaders = ['Authorization', 'Bearer x'];
  }

  it("counts a request's URL and headers one level below the request", () => {
    const shown = unnested(line({ deep: nested(new Request(), 8) }).deep, 8) as Record<string, unknown>;
    expect(shown).toEqual({ method: 'POST', url: { token: REDACTED }, headers: { authorization: REDACTED } });
    const deepest = unnested(line({ deep: nested(new Request(), 9) }).deep, 9) as Record<string, unknown>;
    expect(deepest).toEqual({ method: 'POST', url: TOO_DEEP, headers: TOO_DEEP });
  });

  it('counts the items of a list one level below the list', () => {
    const shown = unnested(line({ deep: nested([{ token: 't' }], 8) }).deep, 8);
    expect(shown).toEqual([{ token: REDACTED }]);
    const deepest = unnested(line({ deep: nested([{ token: 't' }], 9) }).deep, 9);
    expect(deepest).toEqual([TOO_DEEP]);
  });

  it("counts an error's fields and cause one level below the error", () => {
    const err = (): Error => Object.assign(new Error('e', { cause: { token: 't' } }), { detail: { token: 't' } });
    const shown = unnested(line({ deep: nested(err(), 8) }).deep, 8) as Record<string, unknown>;
    expect([shown.detail, shown.cause]).toEqual([{ token: REDACTED }, { token: REDACTED }]);
    const deepest = unnested(line({ deep: nested(err(), 9) }).deep, 9) as Record<string, unknown>;
    expect([deepest.detail, deepest.cause]).toEqual([TOO_DEEP, TOO_DEEP]);
  });
});

describe('an error logged under a key of its own: its fields', () => {
  it('include one with an empty name', () => {
    const logged = line({ failure: failure('x', { '': 'unnamed', token: 't' }) }).failure as Record<string, unknown>;
    expect([logged[''], logged.token]).toEqual(['unnamed', REDACTED]);
  });

  it('include no cause when its own enumerable cause is undefined', () => {
    const err = Object.assign(new Error('x'), { cause: undefined });
    expect(Object.keys(err)).toContain('cause');
    expect(Object.keys(line({ failure: err }).failure as object)).toEqual(['type', 'message', 'stack']);
  });

  it('include an enumerable cause once, scrubbed', () => {
    const err = Object.assign(new Error('x'), { cause: { token: 't' } });
    const logged = line({ failure: err }).failure as Record<string, unknown>;
    expect(logged.cause).toEqual({ token: REDACTED });
    expect(Object.keys(logged)).toEqual(['type', 'message', 'stack', 'cause']);
  });
});
