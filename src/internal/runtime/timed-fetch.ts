/**
 * One request that must be answered within `timeoutMs`: past it the request is aborted and the
 * promise rejects with `late` (a store's message naming what it waited for, never a credential).
 * The stores over HTTP use it so that a delivery fails closed well inside the sender's 10 s.
 */
export async function answeredWithin<T>(request: (signal: AbortSignal) => Promise<T>, timeoutMs: number, late: () => string): Promise<T> {
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new Error(late()));
    }, timeoutMs);
  });
  try {
    return await Promise.race([request(abort.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
