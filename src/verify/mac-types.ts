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
