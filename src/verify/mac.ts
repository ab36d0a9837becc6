import type { webcrypto } from 'node:crypto';
import { nodeBuiltin } from '../internal/node-builtins';
import type { Mac } from './mac-types';
import { nodeMac } from './node-mac';
import { webMac } from './web-mac';

export type { Mac, MacKey, SignedPart } from './mac-types';

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
