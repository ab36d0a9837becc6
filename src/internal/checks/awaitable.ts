/** A value, or a promise of it: what a handler or a store may return. */
export type Awaitable<T> = T | PromiseLike<T>;
