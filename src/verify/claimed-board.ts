import { SvcWebhookError } from '../errors';
import { MAX_PATH_ID_LENGTH } from '../internal/path-pattern';

/**
 * The board a delivery claims, read before it is verified, to pick the one board's secrets to verify
 * it with. Nothing here is trusted: after the MAC matched, the parsed body must name this same board
 * (checked again in the board protocol), so no reading of the body can verify as one board and be
 * handled as another.
 */
export interface BoardClaim {
  readonly boardId: string;
  /** Read from the start of the body without parsing it; see scannedBoardId. */
  readonly scanned: boolean;
}

/** Where svc puts `board` (the seventh field of a compact event); a whole parse is the fallback. */
const SCAN_BYTES = 4096;
const BOARD_KEY = '"board"';
const BOARD_ID = /^"board"\s*:\s*\{\s*"id"\s*:\s*"([^"\\]{1,200})"/;

/**
 * The first `"board":{"id":"…"` in the body's first 4 KB, without parsing the (up to 512 KB) body:
 * an unverified claim costs no JSON.parse, and is found without copying the body. It may be a
 * nested object in a crafted body; that is safe (the parsed event must name the same board after
 * verification) and, for a real delivery whose signature then does not match, the parsed
 * `board.id` is tried too.
 */
export function scannedBoardId(body: Buffer): string | undefined {
  const at = body.indexOf(BOARD_KEY);
  if (at === -1 || at > SCAN_BYTES) return undefined;
  return BOARD_ID.exec(body.toString('latin1', at, Math.min(body.length, at + 256)))?.[1];
}

/** `board.id` of the unverified body, or undefined when the body is not JSON or names no board. */
export function bodyBoardId(body: Buffer): string | undefined {
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const board = typeof payload === 'object' && payload !== null ? (payload as { board?: unknown }).board : undefined;
  const id = typeof board === 'object' && board !== null ? (board as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id !== '' && id.length <= MAX_PATH_ID_LENGTH ? id : undefined;
}

/**
 * The claimed board: from the body's `board.id`, and from the path when the path names one. When
 * both name a board they must be the same one.
 */
export function claimedBoard(body: Buffer, fromPath: string | undefined): BoardClaim {
  const scanned = scannedBoardId(body);
  const fromBody = scanned ?? bodyBoardId(body);
  if (fromBody !== undefined && fromPath !== undefined && fromBody !== fromPath) {
    throw new SvcWebhookError('board_id_mismatch', 'the board in the path and the board in the body differ');
  }
  const boardId = fromBody ?? fromPath;
  if (boardId === undefined) throw new SvcWebhookError('board_id_missing', 'the body names no board (`board.id`), so there is no secret to verify it with');
  return { boardId, scanned: scanned !== undefined };
}
