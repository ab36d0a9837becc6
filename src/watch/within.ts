/**
 * `work`'s answer, or a rejection after `ms`: user code the watcher calls (a board list, a secret
 * resolver, a probe, a client) must never hold a poll forever. The work itself is not stopped.
 */
export async function within<T>(ms: number, what: string, work: () => T | PromiseLike<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} did not answer within ${ms} ms`), { code: 'timeout' })), ms);
  });
  try {
    return await Promise.race([Promise.resolve().then(work), late]);
  } finally {
    clearTimeout(timer);
  }
}
