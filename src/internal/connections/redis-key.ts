import { hasLoneSurrogate } from '../checks/unicode';

/**
 * Text that senders choose (a delivery id, a board id) goes into a Redis key only as a segment made
 * by `keySegment`: ASCII letters, digits, `-`, `_` and `.` stay as they are, and every other
 * character is percent-encoded, its UTF-8 bytes as `%XX` (a lone surrogate, which has no UTF-8
 * form, as `%uXXXX`). A segment therefore holds no `:` (between a key's parts), no `{` or `}` (a
 * Redis Cluster hash tag), no `*`, `?` or `[` (a pattern) and no byte outside ASCII; and two texts
 * never share a segment (`%` itself is encoded). Each key family puts its segments after a fixed
 * marker of its own, so no text can name another family's key.
 */
export function keySegment(text: string): string {
  return text.replace(UNSAFE, (char) =>
    hasLoneSurrogate(char) ? `%u${hex(char.charCodeAt(0), 4)}` : [...utf8.encode(char)].map((byte) => `%${hex(byte, 2)}`).join(''),
  );
}

// With the u flag each match is one code point: a character outside the set, or a lone surrogate.
const UNSAFE = /[^A-Za-z0-9_.-]/gu;
const utf8 = new TextEncoder();

function hex(value: number, digits: number): string {
  return value.toString(16).toUpperCase().padStart(digits, '0');
}
