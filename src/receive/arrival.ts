import type { RequestAccess, RequestFacts } from '../internal/request-access';
import type { DeliveryTrace } from '../observe/telemetry';

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
