/**
 * Handlers by key (an event type, an event kind or a command name), kept in registration order.
 * Lookups happen per delivery, so each key maps straight to its array.
 */
export class HandlerRegistry<H> {
  private readonly byKey = new Map<string, H[]>();

  add(keys: string | readonly string[], handler: H, check: (key: string) => void): void {
    if (typeof handler !== 'function') throw new TypeError('svc-webhooks: a handler must be a function');
    for (const key of typeof keys === 'string' ? [keys] : keys) {
      check(key);
      const list = this.byKey.get(key);
      if (list === undefined) this.byKey.set(key, [handler]);
      else list.push(handler);
    }
  }

  get(key: string): readonly H[] {
    return this.byKey.get(key) ?? EMPTY;
  }
}

const EMPTY: readonly never[] = Object.freeze([]);
