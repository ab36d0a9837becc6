const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Whether `id` is a UUID in its 8-4-4-4-12 form of hexadecimal digits, in either case: the form of
 * every id svc gives a board, a bot user and a delivery.
 */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/**
 * Whether `id` can be the id of an svc board or bot user: a UUID written as svc writes every id,
 * in lower case. A secret resolver is asked about nothing else.
 */
export function isSvcResourceId(id: string): boolean {
  return isUuid(id) && id === id.toLowerCase();
}
