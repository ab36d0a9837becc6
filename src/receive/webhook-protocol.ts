import type { Delivery } from '../internal/delivery/delivery';
import type { DeliveryRoute } from '../route/delivery-route';
import type { DeliveryCheck } from '../validate/delivery-checks';
import type { SchemaName } from '../validate/delivery-checks';
import type { Verifier } from '../verify/verify-signature';

/**
 * What differs between the bot and the board webhook, one module per stage: how a delivery is
 * verified, which schema it meets, the checks after parsing, and how it is routed. The pipeline
 * around them is shared.
 */
export interface WebhookProtocol<S, D extends Delivery> {
  readonly webhook: 'board' | 'bot';
  readonly schema: SchemaName;
  readonly verifier: Verifier<S>;
  readonly check: DeliveryCheck<D>;
  readonly route: DeliveryRoute<D>;
}
