import { isUuid } from '../internal/uuid';

/**
 * The one form of a delivery id that the claim, the commit, the release, the store's keys, the log
 * lines and `ctx.deliveryId` use: a UUID (what svc sends) in lower case, any other id as sent.
 * A UUID spelled in upper case once and lower case once is one delivery, not two.
 */
export function canonicalDeliveryId(id: string): string {
  return isUuid(id) ? id.toLowerCase() : id;
}
