import type { WebhookLogger } from '../internal/logging/logger';
import type { DeliveryStore } from '../dedup/delivery-store';
import type { InboxSettings } from '../inbox/inbox-options';
import type { Delivery } from '../internal/delivery/delivery';
import type { IgnoreReason } from '../internal/delivery/delivery-record';
import type { PathPattern } from '../internal/request/path-pattern';
import type { SchemaPolicy } from '../validate/delivery-checks';
import type { SecretSource } from '../verify/secret-source';

export type { IgnoreReason } from '../internal/delivery/delivery-record';

/** A webhook's options as the pipeline uses them: checked and normalised once, at setup. */
export interface Settings {
  readonly secrets: SecretSource;
  /** The configured secret values (none with a resolver): what leaves other than through the logger is scrubbed of them. */
  readonly fixedSecrets: readonly string[];
  readonly path: string;
  readonly pattern: PathPattern;
  readonly now: () => number;
  /** Largest body accepted, in bytes. */
  readonly maxBodyBytes: number;
  readonly timeoutMs: number;
  readonly leaseMs: number;
  readonly abandonAfterMs: number;
  readonly store: DeliveryStore;
  /** Every line the library logs except the one below, scrubbed of secrets and credentials. */
  readonly logger: WebhookLogger;
  /**
   * The one line per accepted delivery. Its fields are the library's own (a canonical id, the kind
   * of a verified delivery, numbers), so nothing in it needs scrubbing, and it is the hot path.
   */
  readonly lineLogger: WebhookLogger;
  /** Writes what the loggers hold; resolves once written. */
  flushLog(): Promise<void>;
  readonly schemaPolicy: SchemaPolicy;
  /** How long after its first failure an attempt parks a delivery (the store's parking lot), in ms; false: never. */
  readonly parkAfterMs: number | false;
  readonly toleranceSeconds: number;
  readonly inbox?: InboxSettings;
  /**
   * Board, with the `ignore` option: why an authentic, checked delivery is answered without running
   * handlers (before its claim), or undefined to handle it. Absent when nothing is ignored.
   */
  readonly ignore?: (delivery: Delivery) => IgnoreReason | undefined;
}

/** Seconds after which svc may retry a delivery that is busy or outlived its deadline. */
export function retryAfter(settings: Pick<Settings, 'timeoutMs'>): number {
  return Math.max(1, Math.ceil(settings.timeoutMs / 1000));
}
