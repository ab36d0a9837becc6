import type { ParkedDelivery, ParkingLot } from '../dedup/parking-lot';
import type { Receiver } from '../receive/receiver';

/** How a replay of a parked delivery ended. */
export interface ReplayResult {
  readonly id: string;
  /** `handled`: its handlers ran and succeeded now; `duplicate`: an earlier replay handled it, nothing ran. */
  readonly outcome: 'handled' | 'duplicate';
  /**
   * Always true: the signature is not kept with a parked delivery, so a replay runs it as it was
   * verified when it was parked, whatever the webhook's secrets are now.
   */
  readonly verifiedAtParkTime: true;
}

/** The deliveries parked in a webhook's store: `webhook.parked`. */
export interface ParkedDeliveries {
  /** The parked deliveries, oldest first, at most `limit`. */
  list(limit?: number): Promise<readonly ParkedDelivery[]>;
  /** One parked delivery, or undefined. */
  get(id: string): Promise<ParkedDelivery | undefined>;
  /**
   * Runs a parked delivery through the pipeline exactly once: the store's claim, this webhook's
   * handlers, the commit. Rejects with an SvcWebhookError: `not_parked` (404), `handler_failed`,
   * `handler_timeout`, `delivery_in_progress`, `store_unavailable`; a failed replay stays parked,
   * its attempts counted.
   */
  replay(id: string): Promise<ReplayResult>;
  /** Replays every parked delivery not yet replayed, one at a time, oldest first; a failure is in the result, not thrown. */
  replayAll(): Promise<ReadonlyArray<ReplayResult | { readonly id: string; readonly error: Error }>>;
  /** Forgets a parked delivery for good; false when there was none. */
  drop(id: string): Promise<boolean>;
}

/** `webhook.parked`, over the store's parking lot; every call rejects when the store has none. */
export function parkedDeliveries(lot: ParkingLot | undefined, receiver: Pick<Receiver<never, never>, 'replay'>): ParkedDeliveries {
  const open = async (): Promise<ParkingLot> => {
    if (lot === undefined) throw new TypeError("svc-webhooks: this webhook's store has no parking lot (memoryStore, redisStore and postgresStore have one)");
    return lot;
  };
  const replay = async (id: string): Promise<ReplayResult> => {
    await open();
    const outcome = await receiver.replay(id);
    return { id, outcome: outcome === 'replayed' ? 'handled' : 'duplicate', verifiedAtParkTime: true };
  };
  return {
    list: async (limit) => (await open()).list(limit),
    get: async (id) => (await open()).get(id),
    replay,
    async replayAll() {
      const waiting = (await (await open()).list()).filter((p) => p.replayedAt === undefined);
      const results: Array<ReplayResult | { id: string; error: Error }> = [];
      for (const { id } of waiting) results.push(await replay(id).catch((error: Error) => ({ id, error })));
      return results;
    },
    drop: async (id) => (await open()).drop(id),
  };
}
