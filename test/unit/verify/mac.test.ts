import * as nodeCrypto from 'node:crypto';
import fc from 'fast-check';
import { mac, nodeMac, runtimeMac, signedBytes, webMac, type Mac, type MacKey } from '../../../src/verify/mac';

const subtle = globalThis.crypto.subtle;
const utf8 = (text: string) => new TextEncoder().encode(text);
const hmac = (secret: string, ...parts: Array<string | Uint8Array>) => {
  const h = nodeCrypto.createHmac('sha256', secret);
  for (const part of parts) h.update(part);
  return new Uint8Array(h.digest());
};

describe.each<[string, () => Mac, boolean]>([
  ['node:crypto', () => nodeMac(nodeCrypto), false],
  ['WebCrypto', () => webMac(subtle), true],
])('HMAC-SHA256 on %s', (_name, make, async) => {
  const secret = 'the-webhook-secret-0123456789';
  const other = 'another-webhook-secret-0123456789';
  const keysOf = (...secrets: string[]): MacKey[] => secrets.map((s) => make().key(utf8(s)));

  it(async ? 'answers with a promise (WebCrypto is async)' : 'answers synchronously', () => {
    const answer = make().signedByAny(keysOf(secret), hmac(secret, 'x'), ['x']);
    expect(answer instanceof Promise).toBe(async);
  });

  it('is true for the MAC of the parts joined, whatever their split', async () => {
    const m = make();
    const keys = keysOf(secret);
    const body = utf8('{"id":"é"}');
    expect(await m.signedByAny(keys, hmac(secret, '1700000000.', body), ['1700000000', '.', body])).toBe(true);
    expect(await m.signedByAny(keys, hmac(secret, '1700000000.', body), ['1700000000.', body])).toBe(true);
    expect(await m.signedByAny(keys, hmac(secret, body), [body])).toBe(true);
  });

  it('is false for another secret, another body, or a MAC one bit off', async () => {
    const m = make();
    const keys = keysOf(secret);
    expect(await m.signedByAny(keys, hmac(other, 'body'), ['body'])).toBe(false);
    expect(await m.signedByAny(keys, hmac(secret, 'body'), ['bodY'])).toBe(false);
    const flipped = hmac(secret, 'body');
    flipped[31]! ^= 1;
    expect(await m.signedByAny(keys, flipped, ['body'])).toBe(false);
  });

  it('accepts the MAC of any of several keys (a rotation), the first or the last', async () => {
    const m = make();
    const keys = keysOf(other, secret);
    expect(await m.signedByAny(keys, hmac(secret, 'b'), ['b'])).toBe(true);
    expect(await m.signedByAny(keys, hmac(other, 'b'), ['b'])).toBe(true);
    expect(await m.signedByAny(keys, hmac('a-third-secret-0123456789', 'b'), ['b'])).toBe(false);
    expect(await m.signedByAny([], hmac(secret, 'b'), ['b'])).toBe(false);
  });

  it('agrees with node:crypto on any secret and body', async () => {
    const m = make();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 16, maxLength: 64 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.string({ maxLength: 12 }),
        async (s, body, prefix) => {
          expect(await m.signedByAny([m.key(utf8(s))], hmac(s, prefix, body), [prefix, body])).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('the WebCrypto key of a secret', () => {
  it('is imported once, on first use, and kept', async () => {
    const importKey = jest.spyOn(subtle, 'importKey');
    try {
      const m = webMac(subtle);
      const key = m.key(utf8('the-webhook-secret-0123456789'));
      expect(importKey).not.toHaveBeenCalled();
      await m.signedByAny([key], new Uint8Array(32), ['a']);
      await m.signedByAny([key], new Uint8Array(32), ['b']);
      expect(importKey).toHaveBeenCalledTimes(1);
      expect(importKey.mock.calls[0]!.slice(2)).toEqual([{ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']]);
    } finally {
      importKey.mockRestore();
    }
  });

  it('is imported again after an import that failed', async () => {
    const importKey = jest.spyOn(subtle, 'importKey').mockRejectedValueOnce(new Error('import failed'));
    try {
      const m = webMac(subtle);
      const secret = 'the-webhook-secret-0123456789';
      const key = m.key(utf8(secret));
      await expect(m.signedByAny([key], hmac(secret, 'a'), ['a'])).rejects.toThrow('import failed');
      expect(await m.signedByAny([key], hmac(secret, 'a'), ['a'])).toBe(true);
      expect(importKey).toHaveBeenCalledTimes(2);
    } finally {
      importKey.mockRestore();
    }
  });

  it('keeps its own copy of the secret: a later change to the bytes given does not change the key', async () => {
    const m = webMac(subtle);
    const secret = utf8('the-webhook-secret-0123456789');
    const key = m.key(secret);
    secret.fill(0);
    expect(await m.signedByAny([key], hmac('the-webhook-secret-0123456789', 'a'), ['a'])).toBe(true);
  });
});

describe('signedBytes, what WebCrypto signs', () => {
  it('joins the parts, strings as UTF-8', () => {
    expect(Buffer.from(signedBytes(['17.', utf8('é'), 'ü', new Uint8Array(0)])).toString('utf8')).toBe('17.éü');
    expect(signedBytes([]).length).toBe(0);
  });

  it('signs a lone body as it is, without a copy', () => {
    const body = utf8('{}');
    expect(signedBytes([body])).toBe(body);
  });
});

/** Runs `body` as a runtime without node:crypto (no process.getBuiltinModule), and without WebCrypto too when `noWebCrypto`. */
function withoutNodeCrypto(body: (setCrypto: (value: unknown) => void) => void, noWebCrypto = false): void {
  const process = globalThis.process as { getBuiltinModule?: unknown };
  const own = process.getBuiltinModule;
  const crypto = Object.getOwnPropertyDescriptor(globalThis, 'crypto')!;
  const setCrypto = (value: unknown) => Object.defineProperty(globalThis, 'crypto', { value, configurable: true });
  process.getBuiltinModule = undefined;
  if (noWebCrypto) setCrypto(undefined);
  try {
    body(setCrypto);
  } finally {
    process.getBuiltinModule = own;
    Object.defineProperty(globalThis, 'crypto', crypto);
  }
}

describe('the runtime’s HMAC', () => {
  it('is node:crypto’s on Node: synchronous', () => {
    expect(runtimeMac()!.key(utf8('the-webhook-secret-0123456789')).kind).toBe('node');
    expect(mac().key(utf8('the-webhook-secret-0123456789')).kind).toBe('node');
  });

  it('is WebCrypto’s where the runtime has no node:crypto', () => {
    withoutNodeCrypto(() => {
      expect(runtimeMac()!.key(utf8('the-webhook-secret-0123456789')).kind).toBe('web');
    });
  });

  it('is none where there is neither', () => {
    withoutNodeCrypto((setCrypto) => {
      expect(runtimeMac()).toBeUndefined();
      setCrypto({});
      expect(runtimeMac()).toBeUndefined();
    }, true);
  });
});

describe('a runtime with neither node:crypto nor WebCrypto', () => {
  it('cannot verify: the secret option is refused at setup with a TypeError', () => {
    withoutNodeCrypto(() => {
      jest.isolateModules(() => {
        const { secretKeys } = require('../../../src/verify/secret-keys') as typeof import('../../../src/verify/secret-keys');
        expect(() => secretKeys('the-webhook-secret-0123456789')).toThrow(TypeError);
      });
    }, true);
  });
});
