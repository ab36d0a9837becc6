/**
 * Handlers by key (an event type, an event kind or a command name), kept in registration order.
 * Lookups happen per delivery, so each key maps straight to its array.
 */
export class HandlerRegistry<H> {
  private readonly byKey = new Map<string, H[]>();

  /**
   * Registers `handler` for each key, once per key however often the list names it. Every key is
   * checked first: a refused registration registers nothing.
   */
  add(keys: string | readonly string[], handler: H, check: (key: string) => void): void {
    if (typeof handler !== 'function') throw new TypeError('svc-webhooks: a handler must be a function');
    const list = typeof keys === 'string' ? [keys] : Array.isArray(keys) ? keys : undefined;
    if (list === undefined || list.length === 0) throw new TypeError('svc-webhooks: name one key or a non-empty array of keys');
    const unique = new Set<string>(list);
    for (const key of unique) check(key);
    for (const key of unique) {
      const handlers = this.byKey.get(key);
      if (handlers === undefined) this.byKey.set(key, [handler]);
      else handlers.push(handler);
    }
  }

  get(key: string): readonly H[] {
    return this.byKey.get(key) ?? EMPTY;
  }
}

const EMPTY: readonly never[] = Object.freeze([]);
