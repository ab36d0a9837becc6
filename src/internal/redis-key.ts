import { hasLoneSurrogate } from './unicode';

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
  if (PLAIN.test(text)) return text;
  let out = '';
  for (const char of text) {
    if (SAFE.test(char)) out += char;
    else if (hasLoneSurrogate(char)) out += `%u${char.charCodeAt(0).toString(16).toUpperCase()}`;
    else for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const PLAIN = /^[A-Za-z0-9_.-]*$/;
const SAFE = /^[A-Za-z0-9_.-]$/;
