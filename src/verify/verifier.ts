import type { Verified } from '../internal/delivery';
import type { RequestFacts } from '../internal/request-access';

/** How one webhook (bot or board) checks the signature of a delivery. */
export interface Verifier<S> {
  /** Reads and checks the signature headers, before the body is read. */
  readSignature(request: RequestFacts, nowMs: number): S;
  /**
   * Checks the MAC over the raw body, with the secrets of the board or bot the request claims, and
   * says who verified it. Synchronous with a fixed secret or a cached lookup on node:crypto; a
   * promise while a resolver is asked, and always where the runtime's HMAC is async (WebCrypto).
   */
  verify(signature: S, body: Uint8Array, request: RequestFacts): Verified | Promise<Verified>;
  /**
   * With a secret resolver: the secrets of the board (bot) that verified a delivery, dropped from
   * every line logged about it. Taken once the delivery is, before its handlers run: one may forget
   * or rotate them.
   */
  secretsOf(verifiedBy: string | undefined): readonly string[];
}
