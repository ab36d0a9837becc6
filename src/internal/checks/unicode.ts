// With the u flag a surrogate pair is one code point: only a lone surrogate is matched.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Whether `text` holds a lone surrogate. It has no UTF-8 form: Node, ioredis and node-postgres
 * send it as U+FFFD, so such a text and the one with U+FFFD in its place would reach a store as one.
 */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}
