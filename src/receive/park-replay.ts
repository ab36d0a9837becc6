import { claimDelivery } from '../dedup/claim';
import type { DeliveryStore } from '../dedup/delivery-store';
import type { ParkedDelivery, ParkingLot } from '../dedup/parking-lot';
import { SvcWebhookError } from '../errors';
import { headerText } from '../internal/headers';
import type { RequestAccess, RequestFacts } from '../internal/request-access';
import { failureText } from './park';

/**
 * A replay of a parked delivery runs it through the normal pipeline exactly once: the store's claim
 * (under a key of its own, since the delivery's id was recorded as done when it was parked, so
 * that svc's later attempts are duplicates), the handlers, the commit. A second replay of a handled
 * one is a duplicate.
 */

/** The header that asks a receiver to replay the parked delivery it names (its id), on a request signed as svc signs one. */
export const REPLAY_HEADER = 'x-svc-webhooks-replay';

/** The de-dup key a replay claims. */
export function replayKey(id: string): string {
  return `parked-replay:${id}`;
}

/** Whether a verified request asks for a replay; a replay header naming another delivery is refused. */
export function asksReplay(facts: RequestFacts, id: string): boolean {
  const named = headerText(facts, REPLAY_HEADER);
  if (named === undefined) return false;
  if (named.trim().toLowerCase() !== id) throw new SvcWebhookError('delivery_id_mismatch', `the ${REPLAY_HEADER} header names another delivery than the body`);
  return true;
}

/** The parked delivery to replay; 404 `not_parked` when there is none. */
export async function parkedToReplay(lot: ParkingLot | undefined, id: string): Promise<ParkedDelivery> {
  const parked = lot === undefined ? undefined : await lot.get(id);
  if (parked === undefined) throw new SvcWebhookError('not_parked', 'no parked delivery has this id (never parked, dropped, or past its retention)');
  return parked;
}

/** Claims the replay of a parked delivery: its token, or `duplicate` when a replay already handled it. */
export async function claimReplay(store: DeliveryStore, parked: ParkedDelivery, leaseMs: number, retryAfter: number): Promise<string | 'duplicate'> {
  if (parked.replayedAt !== undefined) return 'duplicate';
  const claim = await claimDelivery(store, replayKey(parked.id), leaseMs);
  if (claim.state === 'done') return 'duplicate';
  if (claim.state === 'busy') throw new SvcWebhookError('delivery_in_progress', 'this parked delivery is being replayed by another request', { retryAfter });
  return claim.token;
}

/** Records how a replay ended in the lot: handled (a later replay is a duplicate), or failed once more. */
export async function settleReplay(
  lot: ParkingLot,
  parked: ParkedDelivery,
  end: { at: number } & ({ handled: true } | { handled: false; error: unknown; secrets: readonly string[] }),
): Promise<void> {
  await lot.park(
    end.handled ? { ...parked, replayedAt: end.at } : { ...parked, attempts: parked.attempts + 1, lastError: failureText(end.error, end.secrets) },
  );
}

/** How a replayed delivery is read by the handlers' `ctx.request`: the parked headers and body, at the webhook's path. */
export function parkedRequest(parked: ParkedDelivery, path: string): { request: ParkedRequest; access: RequestAccess<ParkedRequest> } {
  return { request: { headers: parked.headers, body: parked.body, url: path }, access: PARKED_REQUEST };
}

interface ParkedRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  readonly url: string;
}

const PARKED_REQUEST: RequestAccess<ParkedRequest> = {
  facts: (r) => ({ headers: r.headers, url: r.url }),
  url: (r) => r.url,
  readBody: (r) => Promise.resolve(r.body),
  complete: () => true,
  nodeRequest: () => undefined,
  fetchRequest: (r) => new Request(new URL(r.url, 'http://localhost'), { method: 'POST', headers: r.headers }),
};
