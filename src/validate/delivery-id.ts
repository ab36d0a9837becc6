const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * The one form of a delivery id that the claim, the commit, the release, the store's keys, the log
 * lines and `ctx.deliveryId` use: a UUID (what svc sends) in lower case, any other id as sent.
 * A UUID spelled in upper case once and lower case once is one delivery, not two.
 */
export function canonicalDeliveryId(id: string): string {
  return id.length === 36 && UUID.test(id) ? id.toLowerCase() : id;
}
