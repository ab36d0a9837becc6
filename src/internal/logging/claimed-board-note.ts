import type { RequestFacts } from '../request/request-access';

/**
 * The board a request claimed, noted by the verify step when the request is refused and read by the
 * refusal's log line, which shows it (unverified) so a person can find the delivery in svc. Kept
 * here, below both stages, so that neither imports the other.
 */
const claimedBoards = new WeakMap<object, string>();

export function noteClaimedBoard(req: RequestFacts, boardId: string | undefined): void {
  if (boardId !== undefined) claimedBoards.set(req, boardId);
}

/** The board the request claimed, if the verify step noted one. */
export function claimedBoardOf(req: RequestFacts): string | undefined {
  return claimedBoards.get(req);
}
