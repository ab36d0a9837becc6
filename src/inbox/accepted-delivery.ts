import type { Delivery } from '../internal/delivery/delivery';
import type { RequestFacts } from '../internal/request/request-access';
import type { TraceCarrier } from '../internal/delivery/trace-carrier';
import type { InboxJob } from './inbox-job';

/** A delivery the receiver accepted (verified, checked and claimed), as the inbox takes it. */
export interface AcceptedDelivery<D extends Delivery> {
  readonly delivery: D;
  /** The verified raw body. */
  readonly body: Uint8Array;
  readonly request: RequestFacts;
  /** When the request arrived, in ms since the epoch. */
  readonly receivedAt: number;
  /** The receive span's context, when traced: the processing spans link to it. */
  readonly trace?: TraceCarrier | undefined;
}

/**
 * Where an accepted delivery goes instead of the handlers (the inbox): it resolves once the delivery
 * is durably stored, and rejects with a SvcWebhookError (the answer) when it could not be.
 */
export type Handoff<D extends Delivery> = (accepted: AcceptedDelivery<D>) => Promise<void>;

/** What a job keeps of an accepted delivery; it differs between the bot and the board webhook. */
export interface JobSource<D extends Delivery> {
  jobOf(accepted: AcceptedDelivery<D>): InboxJob;
}
