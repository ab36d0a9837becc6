import type * as NodeCrypto from 'node:crypto';
import type { webcrypto } from 'node:crypto';
import { nodeBuiltin } from '../internal/runtime/node-builtins';

/**
 * HMAC-SHA256 over the runtime's crypto, the one step of verification that touches a secret:
 * node:crypto where it exists (synchronous, and faster), WebCrypto elsewhere (workerd, Vercel's Edge
 * runtime, service workers). Picked once, when the module loads.
 */

/** An HMAC-SHA256 key, made once per secret. What it holds depends on the runtime's crypto. */
export interface MacKey {
  readonly kind: 'node' | 'web';
}

/** A part of the signed bytes: the timestamp text, the dot, the body. */
export type SignedPart = string | Uint8Array;

/** HMAC-SHA256 over the runtime's crypto: node:crypto where it exists, WebCrypto elsewhere. */
export interface Mac {
  key(secret: Uint8Array): MacKey;
  /**
   * True when one of the keys signs the parts to exactly `claimed`. Every key is tried and the MACs
   * are compared in constant time, so the time taken tells neither which key matched nor where the
   * claimed MAC first differs. Synchronous on node:crypto; a promise on WebCrypto, whose HMAC is async.
   */
  signedByAny(keys: readonly MacKey[], claimed: Uint8Array, parts: readonly SignedPart[]): boolean | Promise<boolean>;
}

interface NodeMacKey extends MacKey {
  readonly kind: 'node';
  readonly key: NodeCrypto.KeyObject;
}

/** HMAC-SHA256 with node:crypto: synchronous, each secret a KeyObject made once. */
export function nodeMac(crypto: typeof NodeCrypto): Mac {
  return {
    key: (secret): NodeMacKey => ({ kind: 'node', key: crypto.createSecretKey(secret) }),
    signedByAny(keys: readonly MacKey[], claimed: Uint8Array, parts: readonly SignedPart[]): boolean {
      let ok = false;
      for (const key of keys) {
        const hmac = crypto.createHmac('sha256', (key as NodeMacKey).key);
        for (const part of parts) hmac.update(part);
        // Every key is tried, so the time taken does not tell which key matched.
        ok = crypto.timingSafeEqual(hmac.digest(), claimed) || ok;
      }
      return ok;
    },
  };
}

const HMAC_SHA256 = { name: 'HMAC', hash: 'SHA-256' } as const;
const encoder = new TextEncoder();

/** A secret's WebCrypto key, imported on first use and kept (an import that failed is tried again). */
class WebMacKey implements MacKey {
  readonly kind = 'web';
  private imported: Promise<webcrypto.CryptoKey> | undefined;

  constructor(
    private readonly subtle: webcrypto.SubtleCrypto,
    private readonly secret: Uint8Array,
  ) {}

  cryptoKey(): Promise<webcrypto.CryptoKey> {
    if (this.imported === undefined) {
      const importing = this.subtle.importKey('raw', this.secret, HMAC_SHA256, false, ['sign']);
      this.imported = importing;
      // Nothing else replaces a pending import: a failed one is forgotten, and the next use tries again.
      importing.catch(() => {
        this.imported = undefined;
      });
    }
    return this.imported;
  }
}

/** HMAC-SHA256 with WebCrypto, whose HMAC is async; the MACs are compared by `equalBytes`, in constant time. */
export function webMac(subtle: webcrypto.SubtleCrypto): Mac {
  return {
    key: (secret) => new WebMacKey(subtle, secret.slice()),
    async signedByAny(keys: readonly MacKey[], claimed: Uint8Array, parts: readonly SignedPart[]): Promise<boolean> {
      const data = signedBytes(parts);
      let ok = false;
      for (const key of keys) {
        const signed = new Uint8Array(await subtle.sign('HMAC', await (key as WebMacKey).cryptoKey(), data));
        // Every key is tried, so the time taken does not tell which key matched.
        ok = equalBytes(signed, claimed) || ok;
      }
      return ok;
    },
  };
}

/** The parts as the one byte array WebCrypto signs; a lone body is signed as it is, uncopied. */
export function signedBytes(parts: readonly SignedPart[]): Uint8Array {
  const bytes = parts.map((part) => (typeof part === 'string' ? encoder.encode(part) : part));
  if (bytes.length === 1) return bytes[0]!;
  let length = 0;
  for (const b of bytes) length += b.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const b of bytes) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

/**
 * Whether two byte arrays are equal, in a time that depends only on their length: every byte is
 * compared, however early they differ, so a forger cannot learn a MAC byte by byte from timing.
 */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  // Stryker disable next-line EqualityOperator: one index past the end XORs undefined with undefined, 0 (test/mutation/EQUIVALENT.core.md)
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** The runtime's HMAC: node:crypto's where it exists, else WebCrypto's, else none. */
export function runtimeMac(): Mac | undefined {
  const crypto = nodeBuiltin('node:crypto');
  if (crypto !== undefined) return nodeMac(crypto);
  const subtle = (globalThis as { crypto?: { subtle?: webcrypto.SubtleCrypto } }).crypto?.subtle;
  return subtle === undefined ? undefined : webMac(subtle);
}

// Picked on first use, not when the module loads: loading node:crypto takes about 10 ms, which an
// import of the package need not pay (a webhook's setup makes its keys, so it pays it then).
let picked: Mac | null | undefined;

/** The runtime's HMAC; a runtime with neither node:crypto nor WebCrypto cannot verify deliveries. */
export function mac(): Mac {
  picked ??= runtimeMac() ?? null;
  if (picked === null) throw new TypeError('svc-webhooks: this runtime has neither node:crypto nor WebCrypto (crypto.subtle) to verify signatures with');
  return picked;
}
