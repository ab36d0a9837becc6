import type { Claim } from '../dedup/claim';
import type { Delivery } from '../internal/delivery/delivery';
import type { RequestAccess, RequestFacts } from '../internal/request/request-access';
import type { DeliveryTrace } from '../observe/telemetry';
import type { Settings } from './settings';
import type { WebhookProtocol } from './webhook-protocol';

/** One request on its way through the pipeline. */
export interface Arrival<R> {
  readonly req: R;
  readonly access: RequestAccess<R>;
  readonly facts: RequestFacts;
  /** `performance.now()` at arrival: deadlines and durations count from it. */
  readonly started: number;
  /** The clock (`now`) at arrival, in ms since the epoch. */
  readonly receivedAt: number;
  readonly trace: DeliveryTrace | undefined;
  /** Its place among the deliveries in flight. */
  readonly slot: Slot;
}

/** One delivery's place among those in flight. */
export interface Slot {
  /** The delivery goes on after its answer (a commit retried, handlers past their deadline): it counts until `work` settles. */
  keepUntil(work: Promise<unknown>): void;
  /** The delivery is done (unless it was handed over). */
  release(): void;
}

/** A delivery the receiver claimed: what its handlers (or the inbox) and its claim's end need. */
export interface Claimed<R, S, D extends Delivery> {
  readonly arrival: Arrival<R>;
  readonly delivery: D;
  readonly body: Uint8Array;
  /** The claim it holds in the de-dup store. */
  readonly claim: Claim;
  /** The verifying board's (bot's) secrets, with a resolver. */
  readonly verifierSecrets: readonly string[];
  readonly protocol: WebhookProtocol<S, D>;
  readonly settings: Settings;
}

/**
 * Deliveries the receiver is still working on: answered or not, with handlers running or a commit
 * being retried after the answer. `close()` waits for them.
 */
export class InFlight {
  private count = 0;
  private closing = false;
  private readonly drainWaiters: Array<() => void> = [];

  /** True once close() was called: new deliveries are refused. */
  get isClosing(): boolean {
    return this.closing;
  }

  /** One delivery comes in: it counts until its slot is released, or the work it was handed over to settles. */
  open(): Slot {
    this.count++;
    let owned = true;
    const leave = () => {
      if (--this.count === 0 && this.closing) for (const resolve of this.drainWaiters.splice(0)) resolve();
    };
    return {
      keepUntil(work) {
        owned = false;
        void work.catch(() => undefined).finally(leave);
      },
      release() {
        if (!owned) return;
        owned = false;
        leave();
      },
    };
  }

  /** Stops taking deliveries and resolves when every one in flight has settled. */
  close(): Promise<void> {
    this.closing = true;
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }
}
