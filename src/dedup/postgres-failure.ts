/**
 * Which errors mean "the database could not be reached in time" (answered 503, retried by the sender)
 * rather than a fault of a statement or of a handler's own query.
 */

/** A store statement or connection that took longer than `commandTimeoutMs`. */
export class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
}

// node's socket errors, as pg passes them on.
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// SQLSTATEs of a server that is going away or cannot take the connection now.
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300', '53000']);
// pg reports a lost or refused connection with these messages and no code.
const PG_MESSAGES = [
  /^Connection terminated/,
  /connection error and is not queryable/,
  /^timeout exceeded when trying to connect/,
  /^Client was closed and is not queryable/,
];

export function isConnectionFailure(err: unknown): boolean {
  if (err instanceof StoreTimeoutError) return true;
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08')) return true;
  }
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' && PG_MESSAGES.some((m) => m.test(message));
}

/**
 * Settles with `work`, or rejects with a StoreTimeoutError after `ms`. A result that arrives after
 * the timeout is handed to `late` (to give back a connection nobody waits for any more).
 */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string, late?: (value: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new StoreTimeoutError(`postgres did not answer (${what}) within ${ms} ms`));
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (timedOut) late?.(value);
        else resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        // Stryker disable next-line ConditionalExpression: rejecting a promise the timeout rejected does nothing (test/mutation/EQUIVALENT.md)
        if (!timedOut) reject(err);
      },
    );
  });
}
