import { SvcWebhookError } from '../errors';
import { MAX_PATH_ID_LENGTH } from '../internal/request/path-pattern';
import { isSvcResourceId } from '../internal/checks/value-checks';

/**
 * The board a delivery claims, read before it is verified, to pick the one board's secrets to verify
 * it with. Nothing here is trusted: after the MAC matched, the parsed body must name this same board
 * (checked again in the board protocol), so no reading of the body can verify as one board and be
 * handled as another.
 */
export interface BoardClaim {
  readonly boardId: string;
}

/** Where svc puts `board` (the seventh field of a compact event); a whole parse is the fallback. */
const SCAN_BYTES = 4096;
/** `"board"`, as bytes. */
const BOARD_KEY = [0x22, 0x62, 0x6f, 0x61, 0x72, 0x64, 0x22];
const BOARD_ID = /^"board"\s*:\s*\{\s*"id"\s*:\s*"([^"\\]{1,200})"/;
/** The longest `"board":{"id":"…"` the pattern reads (200 characters of id, some spacing). */
const CLAIM_BYTES = 256;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The top-level `"board":{"id":"…"` in the body's first 4 KB, read without parsing or copying the
 * (up to 512 KB) body: an unverified claim costs no JSON.parse. The bytes before it are walked to
 * know that the key is the event's own (outside any string, one object deep). Should the body name
 * `board` twice at the top, JSON.parse keeps the last one: the parsed event must then name this
 * same board after verification, or the delivery is refused.
 */
export function scannedBoardId(body: Uint8Array): string | undefined {
  const end = Math.min(body.length, SCAN_BYTES);
  let depth = 0;
  let inString = false;
  for (let i = 0; i < end; i++) {
    const byte = body[i]!;
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      // A key of the event itself: outside any string, one object deep.
      if (depth === 1 && startsWith(body, i, BOARD_KEY)) return BOARD_ID.exec(latin1(body, i, i + CLAIM_BYTES))?.[1];
      inString = true;
    } else if (byte === 0x7b || byte === 0x5b) depth++;
    else if (byte === 0x7d || byte === 0x5d) depth--;
  }
  return undefined;
}

function startsWith(body: Uint8Array, at: number, bytes: readonly number[]): boolean {
  for (let j = 0; j < bytes.length; j++) if (body[at + j] !== bytes[j]) return false;
  return true;
}

/** The bytes as Latin-1 text (one character a byte), as far as the body goes. */
function latin1(body: Uint8Array, start: number, stop: number): string {
  return String.fromCharCode(...body.subarray(start, stop));
}

const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

/** `board.id` of the unverified body, or undefined when the body is not JSON or names no board. */
export function bodyBoardId(body: Uint8Array): string | undefined {
  let payload: unknown;
  try {
    // Stryker disable BlockStatement: an empty catch leaves `payload` undefined, which names no board either (test/mutation/EQUIVALENT.core.md)
    payload = JSON.parse(lenient.decode(body));
  } catch {
    return undefined;
  }
  // Stryker restore BlockStatement
  const board = typeof payload === 'object' && payload !== null ? (payload as { board?: unknown }).board : undefined;
  const id = typeof board === 'object' && board !== null ? (board as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id !== '' && id.length <= MAX_PATH_ID_LENGTH ? id : undefined;
}

/**
 * The claimed board: from the body's `board.id`, and from the path when the path names one. When
 * both name a board they must be the same one.
 */
export function claimedBoard(body: Uint8Array, fromPath: string | undefined): BoardClaim {
  const scanned = scannedBoardId(body);
  const fromBody = scanned ?? bodyBoardId(body);
  if (fromBody !== undefined && fromPath !== undefined && fromBody !== fromPath) {
    throw new SvcWebhookError('board_id_mismatch', 'the board in the path and the board in the body differ');
  }
  const boardId = fromBody ?? fromPath;
  if (boardId === undefined) throw new SvcWebhookError('board_id_missing', 'the body names no board (`board.id`), so there is no secret to verify it with');
  return { boardId };
}

/**
 * Refuses a claimed board that cannot be an svc board id (a lowercase UUID): the secret resolver is
 * asked about nothing else, so no `constructor`, no `../`, no text a `uuid` column refuses reaches it.
 */
export function checkClaimedBoardId(boardId: string): void {
  if (!isSvcResourceId(boardId))
    throw new SvcWebhookError('unknown_board', 'the board this delivery claims is no svc board id (a lowercase UUID), so no secret is known for it');
}
