/** A delivery after every check: what de-duplication, the inbox and routing need. */
export interface Delivery {
  readonly id: string;
  /** The board event type or the bot event kind. */
  readonly kind: string;
  /** The verified, parsed body. */
  readonly payload: unknown;
}
