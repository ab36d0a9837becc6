import type { webcrypto } from 'node:crypto';
import { nodeBuiltin } from '../internal/node-builtins';
import { nodeMac } from './node-mac';
import { webMac } from './web-mac';

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

/** The runtime's HMAC, picked once, when the module loads: node:crypto's is synchronous and faster. */
export function runtimeMac(): Mac | undefined {
  const crypto = nodeBuiltin('node:crypto');
  if (crypto !== undefined) return nodeMac(crypto);
  const subtle = (globalThis as { crypto?: { subtle?: webcrypto.SubtleCrypto } }).crypto?.subtle;
  return subtle === undefined ? undefined : webMac(subtle);
}

const MAC = runtimeMac();

/** The runtime's HMAC; a runtime with neither node:crypto nor WebCrypto cannot verify deliveries. */
export function mac(): Mac {
  if (MAC === undefined) throw new TypeError('svc-webhooks: this runtime has neither node:crypto nor WebCrypto (crypto.subtle) to verify signatures with');
  return MAC;
}
