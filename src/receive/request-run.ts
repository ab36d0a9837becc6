import type { RequestAccess, RequestFacts } from '../internal/request-access';
import type { DeliveryTrace } from '../observe/telemetry';
import type { Slot } from './in-flight';

/** One request on its way through the pipeline. */
export interface RequestRun<R> {
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
