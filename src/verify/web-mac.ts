import type { webcrypto } from 'node:crypto';
import { equalBytes } from './equal-bytes';
import type { Mac, MacKey, SignedPart } from './mac-types';

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

/**
 * HMAC-SHA256 with WebCrypto, for runtimes without node:crypto (workerd, Vercel's Edge runtime,
 * service workers). Its HMAC is async; the MACs are compared by `equalBytes`, in constant time.
 */
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
